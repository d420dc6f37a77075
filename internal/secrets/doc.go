// Package secrets decides which key names and values are secrets, for the two places
// airlock keeps a secret out of a file: the audit log (Audit, Redact) and the TOML that
// `airlock import` writes from another client's config (Import). Both split a key name
// into words the same way (at anything but letters and digits, and at case changes:
// accessToken, X-Api-Key, MYSQL_PWD, OAuthToken); each policy then has its own words,
// because a mistake costs something different in each place.
//
// Audit reads the arguments of every call an agent or a person makes. A false positive
// there hides an argument a person needs to read in the log; a miss keeps the secret
// in a file that is kept for good. So it names secrets narrowly and reads values
// broadly:
//   - words anywhere in the name: token(s), secret(s), password(s), passwd, passphrase,
//     pwd, pass, apikey, authorization, auth, cookie(s), otp, totp, credential(s),
//     privatekey, bearer, jwt;
//   - pairs of adjacent words, because "key" alone names a lookup key as often as a
//     secret: api key, private key, access key, secret key, signing key, encryption key,
//     ssh key, client key, master key, session key, session id;
//   - a word that merely contains one never counts (keywords, monkey, author,
//     tokenizer, secretary);
//   - values by their shape anywhere in a string (Bearer …, ghp_ and its siblings,
//     github_pat_, sk-, xox?-, AKIA/ASIA, a PEM private key, a JWT, URL userinfo with
//     a password) and NAME=value or NAME: value whose NAME is a secret's name.
//
// Import reads a config file a person asked to convert, once, and its output is meant
// to be committed or shared. A false positive there costs one exported variable; a
// miss leaks a credential into a file others read. So it names secrets broadly:
//   - words anywhere in the name: token(s), secret(s), password, passwd, passphrase,
//     pass, pwd, pw, passcode, pin, key(s), apikey, auth, authorization, credential(s),
//     cookie, pat, bearer, jwt, otp, totp, login, session, sid, signature, sig (the
//     audit words without passwords, cookies and privatekey, which the inside words
//     or "key" already cover, plus the short and sideways names for the same things);
//   - "key" alone counts, so no pairs are needed;
//   - words found inside a longer word (APIKEY, authtoken, MYSQLPASSWORD): token,
//     secret, password, passwd, passphrase, apikey, accountkey, credential,
//     authorization;
//   - values by their look: an Authorization scheme with credentials, a URL with a
//     password, a token with a published key prefix (ImportToken), or a long run of
//     token characters holding a letter and a digit (a generated secret).
//
// The two splitters differ in one place, kept as each had it: Audit also splits where
// a capital follows a digit (s3Key: s3, key), Import does not (s3key).
//
// Find reads a call's arguments for what would leak through a tool that can carry
// data out: the same table of shapes the audit log redacts (shapes.go), each with a
// name a question can say, and the values airlock knows to be secrets (Known: the
// environment it passes to its servers). Mask hides them for display, keeping only a
// shape's published prefix and the length. Both read the arguments once.
//
// Invariants: nothing here does I/O, keeps state or starts goroutines; every function
// is safe for concurrent use.
package secrets
