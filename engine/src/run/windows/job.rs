//! A Job Object per run: the command is started suspended, put in a job of its own and only then
//! let go, so that everything it starts is in the job from its first instruction (a child
//! cannot leave a job it was not allowed to break away from, and this one allows none). Ending
//! the job ends the whole tree at once; the job is made to end its processes when its last
//! handle closes, which the system does when buildvise dies however it dies: that is the guard's
//! job on Windows.
//!
//! Every call into Windows is here, through `windows-sys`, which is why this module is allowed
//! `unsafe`: each block passes handles this module owns and buffers sized as the call is told.
#![allow(unsafe_code)]

use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::process::Child;
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, TH32CS_SNAPTHREAD, THREADENTRY32, Thread32First, Thread32Next,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectBasicProcessIdList, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{
    OpenProcess, OpenThread, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION, QueryFullProcessImageNameW,
    ResumeThread, THREAD_SUSPEND_RESUME,
};

/// The creation flag that starts a process with its first thread suspended.
pub(super) const CREATE_SUSPENDED: u32 = windows_sys::Win32::System::Threading::CREATE_SUSPENDED;

/// The exit code of the processes a job's end terminates: 1, as `taskkill /f` leaves.
const TERMINATED: u32 = 1;

/// The most process ids read from a job at once; more are ended all the same, only not named.
const MOST_LISTED: usize = 1024;

/// A null or invalid handle as an error, or the handle owned.
fn owned(handle: HANDLE) -> std::io::Result<OwnedHandle> {
    if handle.is_null() || handle as isize == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a handle the call just returned to this process, owned by nothing else.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) })
}

/// One run's job.
#[derive(Debug)]
pub(super) struct Job(OwnedHandle);

impl Job {
    /// A job that ends its processes when its last handle closes.
    pub fn new() -> std::io::Result<Job> {
        // SAFETY: no security attributes (so the handle is not inherited) and no name.
        let job = Job(owned(unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) })?);
        let mut limits = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the job is ours; the structure and its size are the ones the class names.
        let set = unsafe {
            SetInformationJobObject(
                job.handle(),
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if set == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(job)
    }

    fn handle(&self) -> HANDLE {
        self.0.as_raw_handle() as HANDLE
    }

    /// Puts `child`, started suspended, in the job, then resumes it.
    pub fn adopt(&self, child: &Child) -> std::io::Result<()> {
        // SAFETY: both handles are open: the job's, and the child's, which `child` holds.
        if unsafe { AssignProcessToJobObject(self.handle(), child.as_raw_handle() as HANDLE) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        resume(child.id())
    }

    /// Ends every process in the job.
    pub fn terminate(&self) {
        // SAFETY: the job's handle is open. A job with nothing left in it is ended all the same.
        unsafe { TerminateJobObject(self.handle(), TERMINATED) };
    }

    /// The ids of the processes in the job that are still running.
    pub fn processes(&self) -> Vec<u32> {
        #[repr(C)]
        struct IdList {
            assigned: u32,
            listed: u32,
            ids: [usize; MOST_LISTED],
        }
        let mut list = IdList { assigned: 0, listed: 0, ids: [0; MOST_LISTED] };
        // SAFETY: the buffer is `IdList`, laid out as JOBOBJECT_BASIC_PROCESS_ID_LIST with room
        // for MOST_LISTED ids, and its size is given; the call fills at most that. A job with
        // more processes fails with ERROR_MORE_DATA after listing what fits, so the count listed
        // is read either way.
        unsafe {
            QueryInformationJobObject(
                self.handle(),
                JobObjectBasicProcessIdList,
                (&raw mut list).cast(),
                size_of::<IdList>() as u32,
                std::ptr::null_mut(),
            )
        };
        let listed = (list.listed as usize).min(MOST_LISTED);
        list.ids[..listed].iter().map(|&id| id as u32).collect()
    }
}

/// Resumes the threads of the suspended process `pid` (it has one: the first).
fn resume(pid: u32) -> std::io::Result<()> {
    // SAFETY: a snapshot of the system's threads, owned below.
    let snapshot = owned(unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) })?;
    let mut entry = THREADENTRY32 { dwSize: size_of::<THREADENTRY32>() as u32, ..Default::default() };
    let mut resumed = false;
    // SAFETY: the snapshot is open and `entry` says its own size, as the calls require.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle() as HANDLE, &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opens a thread by id; the handle is owned (and closed) below.
            let thread = owned(unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) })?;
            // SAFETY: the thread handle is open, with the right to resume.
            if unsafe { ResumeThread(thread.as_raw_handle() as HANDLE) } == u32::MAX {
                return Err(std::io::Error::last_os_error());
            }
            resumed = true;
        }
        // SAFETY: as for Thread32First.
        more = unsafe { Thread32Next(snapshot.as_raw_handle() as HANDLE, &mut entry) } != 0;
    }
    if resumed { Ok(()) } else { Err(std::io::Error::other(format!("no thread of process {pid} to resume"))) }
}

/// The name of process `pid`'s program (`node`, for `C:\...\node.exe`), if it can be read.
pub(super) fn name(pid: u32) -> Option<String> {
    // SAFETY: opens a process by id for reading its name; the handle is owned below.
    let process = owned(unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) }).ok()?;
    let mut path = [0u16; 1024];
    let mut len = path.len() as u32;
    // SAFETY: the process handle is open; `len` is the buffer's room in characters, and the call
    // sets it to the length written.
    let read = unsafe {
        QueryFullProcessImageNameW(process.as_raw_handle() as HANDLE, PROCESS_NAME_WIN32, path.as_mut_ptr(), &mut len)
    };
    if read == 0 {
        return None;
    }
    let path = String::from_utf16_lossy(path.get(..len as usize)?);
    let file = path.rsplit(['\\', '/']).next()?;
    Some(file.strip_suffix(".exe").or_else(|| file.strip_suffix(".EXE")).unwrap_or(file).to_string())
}
