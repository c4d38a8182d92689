// Debian's SQLite 3 (package libsqlite3-dev): https://sqlite.org/c3ref/intro.html
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import: binding
// with it makes SQLite copy the bytes before sqlite3_bind_* returns.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
