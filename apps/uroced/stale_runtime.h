// What a killed uroced leaves outside its run directory: EAL's runtime
// directory (/var/run/dpdk/<file prefix>, 6 MB of RAM-backed files per
// daemon; EAL never removes it, and a SIGKILLed daemon cannot).
//
// The daemon records where that directory is in RUN/eal_runtime (its pid
// and the directory, one per line) once EAL is up, and deletes the record
// when it exits cleanly. The next daemon started on the same run directory
// finds a record only if its predecessor died: it then removes the
// directory named there, unless the recorded process still runs or some
// process still holds EAL's lock on the directory's config file (the
// prefix is in use after all), and only when the path is a plain
// ".../dpdk/<name>" directory (a damaged record cannot aim it elsewhere).
// An embedded engine writes the same record in its program's private run
// directory, and uroce-embedded cleans after the program the same way
// once it ended (docs/embedded.md).
#pragma once

#include <string>

namespace uroce::daemon {

inline constexpr const char* kRuntimeRecord = "eal_runtime";

// Writes the record. "" or the error.
std::string write_runtime_record(const std::string& record, long pid,
                                 const std::string& runtime_dir);

// Cleans after a dead predecessor: removes the directory a record at
// `record` names (see above) and the record. Returns "" when there was
// nothing to do or it was done (*removed then names the directory, or is
// empty), else why the directory was left (the record is kept then).
std::string clean_stale_runtime(const std::string& record, std::string* removed);

}  // namespace uroce::daemon
