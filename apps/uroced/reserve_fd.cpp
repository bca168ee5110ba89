#include "apps/uroced/reserve_fd.h"

#include <fcntl.h>
#include <unistd.h>

namespace uroce::daemon {

bool ReserveFd::take() {
  if (fd_ < 0) fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  return fd_ >= 0;
}

void ReserveFd::give() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace uroce::daemon
