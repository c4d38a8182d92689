// Debian's libsodium (package libsodium-dev): https://doc.libsodium.org/password_hashing
#include <sodium.h>
