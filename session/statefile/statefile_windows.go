//go:build windows

package statefile

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// openNoFollow opens path with FILE_FLAG_OPEN_REPARSE_POINT, which opens a link
// (symbolic link, junction, any reparse point) itself instead of its target; the
// handle is then refused when it is a reparse point. Nothing is read through a link.
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|windows.O_FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, err
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		f.Close()
		return nil, &Error{Path: path, Problem: Symlink}
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		f.Close()
		return nil, &Error{Path: path, Problem: NotRegular, Detail: "a directory"}
	}
	return f, nil
}

// sids are the principals a private file may grant access to: the user, SYSTEM and
// the Administrators group (both of which can read any file on the machine anyway).
type sids struct {
	user, system, admins, ownerRights *windows.SID
}

var (
	sidsOnce sync.Once
	sidsVal  sids
	sidsErr  error
)

func principals() (sids, error) {
	sidsOnce.Do(func() {
		tu, err := windows.GetCurrentProcessToken().GetTokenUser()
		if err != nil {
			sidsErr = fmt.Errorf("finding the current user: %w", err)
			return
		}
		var s sids
		if s.user, err = tu.User.Sid.Copy(); err != nil {
			sidsErr = err
			return
		}
		if s.system, err = windows.CreateWellKnownSid(windows.WinLocalSystemSid); err != nil {
			sidsErr = err
			return
		}
		if s.admins, err = windows.CreateWellKnownSid(windows.WinBuiltinAdministratorsSid); err != nil {
			sidsErr = err
			return
		}
		if s.ownerRights, err = windows.CreateWellKnownSid(windows.WinCreatorOwnerRightsSid); err != nil {
			sidsErr = err
			return
		}
		sidsVal = s
	})
	return sidsVal, sidsErr
}

func (s sids) trusted(sid *windows.SID) bool {
	return sid.Equals(s.user) || sid.Equals(s.system) || sid.Equals(s.admins) || sid.Equals(s.ownerRights)
}

// name is a SID as a person reads it (DOMAIN\name), or its S-1-… form.
func name(sid *windows.SID) string {
	if acct, dom, _, err := sid.LookupAccount(""); err == nil {
		if dom != "" {
			return dom + `\` + acct
		}
		return acct
	}
	return sid.String()
}

// check refuses a file whose owner is not the user, SYSTEM or Administrators, or
// whose DACL allows anyone else any access. A missing (null) DACL allows everyone.
func check(f *os.File, path string) error {
	s, err := principals()
	if err != nil {
		return err
	}
	sd, err := windows.GetSecurityInfo(windows.Handle(f.Fd()), windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("reading who may use %s: %w", path, err)
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return fmt.Errorf("reading the owner of %s: %v", path, err)
	}
	if !owner.Equals(s.user) && !owner.Equals(s.system) && !owner.Equals(s.admins) {
		return &Error{Path: path, Problem: OtherOwner, Detail: "owned by " + name(owner)}
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return &Error{Path: path, Problem: Shared, Detail: "it has no access list, so everyone may use it"}
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return fmt.Errorf("reading who may use %s: %w", path, err)
		}
		const inheritOnly = 0x08 // INHERIT_ONLY_ACE: applies to children, not this file
		if ace.Header.AceFlags&inheritOnly != 0 || ace.Mask == 0 {
			continue
		}
		switch ace.Header.AceType {
		case windows.ACCESS_DENIED_ACE_TYPE:
			continue
		case windows.ACCESS_ALLOWED_ACE_TYPE:
			sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
			if !s.trusted(sid) {
				return &Error{Path: path, Problem: Shared, Detail: "its access list allows " + name(sid)}
			}
		default:
			// Object and callback ACEs are not used on files; one airlock cannot read
			// might allow anyone.
			return &Error{Path: path, Problem: Shared, Detail: fmt.Sprintf("its access list has an entry of type %d airlock cannot check", ace.Header.AceType)}
		}
	}
	return nil
}

func privateFix(path string) string {
	return "move it aside (airlock writes a new one readable only by you), or run icacls \"" + path + "\" /inheritance:r /grant:r \"%USERNAME%:F\""
}

// createPrivate creates path exclusively with a protected DACL that grants full
// access to the current user only ("D:P(A;;FA;;;<user SID>)"), set at creation
// through SECURITY_ATTRIBUTES so no other process can open the file first.
func createPrivate(path string) (*os.File, error) {
	s, err := principals()
	if err != nil {
		return nil, err
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;FA;;;" + s.user.String() + ")")
	if err != nil {
		return nil, err
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, sa,
		windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		if err == windows.ERROR_FILE_EXISTS || err == windows.ERROR_ALREADY_EXISTS {
			return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrExist}
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
