// `uroce-ctl --pid PID`: the run directory of a program's embedded engine
// (docs/embedded.md). uroce-run --embedded runs the program with SYSFS_PATH
// at RUN/sysfs, RUN being the private run directory whose uroced.sock the
// engine listens on; the program's environment (/proc/PID/environ) names it.
#pragma once

#include <sys/types.h>
#include <string>
#include <string_view>

namespace uroce::ctl_tool {

// RUN from the NUL-separated environment `environ` of process `pid`, into
// *dir; "" or why not.
std::string run_dir_from_environ(std::string_view environ, pid_t pid, std::string* dir);

// The same from /proc/PID/environ.
std::string embedded_run_dir(pid_t pid, std::string* dir);

}  // namespace uroce::ctl_tool
