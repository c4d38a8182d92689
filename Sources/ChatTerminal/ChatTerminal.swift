// ChatTerminal: im-client's screen in a terminal (issue 12). `TerminalUI` keeps the line being typed
// at the bottom under a status line and prints everything else above both without tearing it; one
// thread owns the terminal (poll(2) on the keyboard and a wake pipe that other threads and signal
// handlers write to). Editing and history are Debian's libedit through the `CEditLine` system library
// (`LineEditor`); `EditAreaLayout` is libedit's row arithmetic, so the cursor can go back to the top of
// what libedit drew. The terminal is put back as it was on every way out: finish, Ctrl-Z, a crash.
// Knows nothing of the chat: IMChat writes the lines and the status, im-client wires the two.
