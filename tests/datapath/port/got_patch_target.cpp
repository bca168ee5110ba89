// A shared object for test_got_patch.cpp: it calls getppid through its own
// GOT. Built twice, with a PLT (a JUMP_SLOT relocation) and with -fno-plt
// (GLOB_DAT), as the function named by GOT_TARGET_FN.
#include <unistd.h>

extern "C" pid_t GOT_TARGET_FN() { return getppid(); }
