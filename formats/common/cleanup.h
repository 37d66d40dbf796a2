#pragma once
// Interrupt cleanup: temporaries to remove when SIGINT or SIGTERM arrives.
//
// Slurm sends SIGTERM at a time limit or preemption, Kubernetes on pod
// deletion; a user presses Ctrl-C. Output temporaries (`.<name>.tmp.<pid>`)
// registered here are unlinked by the signal handler, which then exits with
// 128 + signal (130 for SIGINT, 143 for SIGTERM). Spill files need no entry:
// they are unlinked as soon as they are created.
#include <string>

namespace tracemill::formats {

// OpenTemporary creates `path` (O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644) and
// records it for removal on interrupt. Returns the fd (or -1 with errno set)
// and stores the slot for UnregisterTemporary in `*slot` (-1 if the table of
// 1,024 slots is full). The path is recorded before the file exists and the
// handler waits for creations in flight, so no interrupt can leave it behind;
// once an interrupt has begun, a caller here blocks until the process exits.
int OpenTemporary(const std::string& path, int* slot);
// DeferInterrupts marks a short critical section (create + record, rename +
// journal) that an interrupt waits for (at most ~200 ms) before removing
// temporaries and exiting, so that outputs on disk and the journal agree.
// If an interrupt has already begun, the constructor blocks until exit.
class DeferInterrupts {
 public:
  DeferInterrupts();
  ~DeferInterrupts();
  DeferInterrupts(const DeferInterrupts&) = delete;
  DeferInterrupts& operator=(const DeferInterrupts&) = delete;
};
// UnregisterTemporary forgets a slot (after rename or removal).
void UnregisterTemporary(int slot);
// InstallInterruptCleanup installs the SIGINT/SIGTERM handlers and ignores
// SIGXFSZ, so that a write past `ulimit -f` fails with EFBIG (idempotent).
void InstallInterruptCleanup();

// Finish first (`convert --follow`): with `on`, the first SIGINT/SIGTERM
// only records the signal (PendingInterrupt) and says that the work in
// progress is being finished; a second one cleans up and exits as above.
void SetFinishOnInterrupt(bool on);
// PendingInterrupt: the signal recorded in finish-first mode, or 0.
int PendingInterrupt();
// RegisterTemporaryDirectory records a directory (a window being written)
// that an interrupt empties (one level: its files) and removes; returns a
// slot for UnregisterTemporaryDirectory, or -1 if the 16 slots are taken.
int RegisterTemporaryDirectory(const std::string& path);
void UnregisterTemporaryDirectory(int slot);

}  // namespace tracemill::formats
