//go:build windows

package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// readPolicyFile opens the policy file itself (a reparse point at its name is
// refused, never followed), checks its folder and the open handle's owner and
// access list, and reads it. The owner must be Administrators or SYSTEM, and no
// entry may let anyone else write it.
func readPolicyFile(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := checkPolicyHandle(dir); err != nil {
		return nil, &PolicyError{Path: path, Why: dirProblem(dir, err.Error())}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|windows.O_FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return nil, err
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		return nil, &PolicyError{Path: path, Why: "is a link (reparse point): airlock reads a policy only from the file itself"}
	}
	if why := policyHandleProblem(windows.Handle(f.Fd())); why != "" {
		return nil, &PolicyError{Path: path, Why: why}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPolicyBytes {
		return nil, &PolicyError{Path: path, Why: "is larger than 4 MiB"}
	}
	return data, nil
}

type policyDirError string

func (e policyDirError) Error() string { return string(e) }

// checkPolicyHandle checks the folder at path (opened with backup semantics, as a
// folder must be).
func checkPolicyHandle(path string) error {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	var flags uint32 = windows.FILE_FLAG_BACKUP_SEMANTICS
	h, err := windows.CreateFile(p, windows.READ_CONTROL, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, flags, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if why := policyHandleProblem(h); why != "" {
		return policyDirError(why)
	}
	return nil
}

// writeMask is every right that changes a file or who may use it.
const writeMask = windows.FILE_WRITE_DATA | windows.FILE_APPEND_DATA | windows.FILE_WRITE_EA |
	windows.FILE_WRITE_ATTRIBUTES | windows.WRITE_DAC | windows.WRITE_OWNER | windows.DELETE |
	windows.GENERIC_WRITE | windows.GENERIC_ALL | fileDeleteChild

// fileDeleteChild is FILE_DELETE_CHILD: a folder's right to delete what it holds.
const fileDeleteChild = 0x40

// policyHandleProblem says why the object open at h cannot be trusted as a
// policy, or "".
func policyHandleProblem(h windows.Handle) string {
	system, err1 := windows.CreateWellKnownSid(windows.WinLocalSystemSid)
	admins, err2 := windows.CreateWellKnownSid(windows.WinBuiltinAdministratorsSid)
	installer, err3 := windows.StringToSid("S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464")
	if err1 != nil || err2 != nil || err3 != nil {
		return "cannot be checked: the well-known accounts cannot be named"
	}
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return "cannot be checked: " + err.Error()
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return "cannot be checked: its owner cannot be read"
	}
	if !owner.Equals(admins) && !owner.Equals(system) && !owner.Equals(installer) {
		return "is owned by " + owner.String() + ", not Administrators or SYSTEM"
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return "has no access list, so everyone may write it"
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return "cannot be checked: " + err.Error()
		}
		const inheritOnly = 0x08
		if ace.Header.AceFlags&inheritOnly != 0 || ace.Mask&writeMask == 0 {
			continue
		}
		switch ace.Header.AceType {
		case windows.ACCESS_DENIED_ACE_TYPE:
			continue
		case windows.ACCESS_ALLOWED_ACE_TYPE:
			sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
			if !sid.Equals(admins) && !sid.Equals(system) && !sid.Equals(installer) {
				return "lets " + sid.String() + " write it (its access list)"
			}
		default:
			return fmt.Sprintf("has an access entry of type %d airlock cannot check", ace.Header.AceType)
		}
	}
	return ""
}

// systemProgramData is the ProgramData known folder as the system reports it, ""
// when it cannot say (policyPlacesFor then uses C:\ProgramData). The environment's
// %ProgramData% is the person's to set and is never read for it.
func systemProgramData() string {
	d, err := windows.KnownFolderPath(windows.FOLDERID_ProgramData, 0)
	if err != nil {
		return ""
	}
	return d
}
