//go:build windows

package conn

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procAttr starts the child suspended, so that it runs no instruction, and starts
// no process, before attachTree has put it in its Job Object.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
}

// procTree is the Job Object holding a stdio server and every process it starts.
// The job is created with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: closing its last
// handle (release, or airlock exiting or crashing) ends every process in it, as a
// parent-death signal and a process group do on Linux.
type procTree struct{ job windows.Handle }

// attachTree puts the suspended child in a new Job Object and then resumes it. A
// child that cannot be put in a job is killed: a server is never left running
// without a way to end its whole tree.
func attachTree(cmd *exec.Cmd) (t procTree, err error) {
	pid := uint32(cmd.Process.Pid)
	defer func() {
		if err != nil {
			_ = cmd.Process.Kill()
			if t.job != 0 {
				windows.CloseHandle(t.job)
			}
			t = procTree{}
		}
	}()
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return t, fmt.Errorf("creating a job object: %w", err)
	}
	t.job = job
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return t, fmt.Errorf("setting up the job object: %w", err)
	}
	// os.Process keeps its handle private; the pid cannot be reused while it is open.
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return t, fmt.Errorf("opening the server process: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		return t, fmt.Errorf("putting the server in a job object: %w", err)
	}
	if err := resumeProcess(pid); err != nil {
		return t, fmt.Errorf("resuming the server process: %w", err)
	}
	return t, nil
}

// resumeProcess resumes the threads of a process started suspended (exec.Cmd does
// not hand out the primary thread's handle, so its threads are found by snapshot).
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return err
	}
	if resumed == 0 {
		return errors.New("no thread found")
	}
	return nil
}

// kill ends every process in the job. Windows has no polite signal to send a
// console process tree, so SIGTERM and SIGKILL both terminate; the polite step is
// the closed stdin and the grace period before it.
func (t procTree) kill(_ *exec.Cmd, _ syscall.Signal) error {
	if t.job == 0 {
		return nil
	}
	return windows.TerminateJobObject(t.job, 1)
}

// release closes the job's handle, which ends anything still in it.
func (t procTree) release() {
	if t.job != 0 {
		windows.CloseHandle(t.job)
	}
}
