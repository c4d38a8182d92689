// Debian's official NATS C client, libnats 3.4 (package libnats-dev): https://nats-io.github.io/nats.c/
// Swift cannot call libnats' function-like macros; these inline functions stand in for them.
#include <nats/nats.h>

/// nats_CheckCompatibility(): whether the libnats loaded at run time is one these headers (3.4) can
/// use. A macro, since it passes the headers' own version numbers.
static inline bool cnats_check_compatibility(void) {
    return nats_CheckCompatibility();
}
