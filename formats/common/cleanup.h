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

// RegisterTemporary records `path` for removal on interrupt; returns a slot
// for UnregisterTemporary, or -1 if the table (1,024 slots) is full.
int RegisterTemporary(const std::string& path);
// UnregisterTemporary forgets a slot (after rename or removal).
void UnregisterTemporary(int slot);
// InstallInterruptCleanup installs the SIGINT/SIGTERM handlers (idempotent).
void InstallInterruptCleanup();

}  // namespace tracemill::formats
