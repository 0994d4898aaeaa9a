# lib/src/proactor: io_uring through Debian's liburing (liburing-dev) when
# it is installed for $(CC)'s target; without it (or with URING=0) the
# Proactor runs on the Reactor alone and asx_proactor_open() says so.
URING_PROBE := \#include <liburing.h>\nint main(void) { struct io_uring r; return io_uring_queue_init(1, &r, 0); }\n
ifneq ($(URING),0)
ASX_HAVE_URING := $(shell printf '$(URING_PROBE)' | $(CC) -x c - -o /dev/null -luring 2>/dev/null && echo 1)
endif
ifeq ($(ASX_HAVE_URING),1)
LIB_LIBS += -luring
CPPFLAGS_ASX += -DASX_HAVE_LIBURING
endif
