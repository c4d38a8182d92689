// CEditLine: Debian's libedit (libedit-dev, BSD licence; pkg-config libedit), the NetBSD line editor,
// for im-client's terminal (Sources/ChatTerminal). el_set(3), el_get(3) and history(3) are variadic,
// which Swift cannot call: the inline functions below call them with fixed arguments, one each.
#ifndef CEDITLINE_SHIM_H
#define CEDITLINE_SHIM_H

#include <histedit.h>
#include <stddef.h>
#include <wctype.h>

/// wcwidth(3): columns of a wide character; declared here as glibc declares it only under _XOPEN_SOURCE.
extern int wcwidth(wchar_t character);

/// el_set(el, EL_PROMPT, prompt).
static inline int cedit_set_prompt(EditLine *el, char *(*prompt)(EditLine *)) { return el_set(el, EL_PROMPT, prompt); }
/// el_set(el, EL_EDITOR, mode): "emacs" or "vi".
static inline int cedit_set_editor(EditLine *el, const char *mode) { return el_set(el, EL_EDITOR, mode); }
/// el_set(el, EL_SIGNAL, on): whether libedit installs its own signal handlers while reading.
static inline int cedit_set_signal(EditLine *el, int on) { return el_set(el, EL_SIGNAL, on); }
/// el_set(el, EL_UNBUFFERED, on): el_gets returns after every key. Turning it on sets the terminal up,
/// resets the line and draws the prompt; turning it off puts the terminal back in cooked mode.
static inline int cedit_set_unbuffered(EditLine *el, int on) { return el_set(el, EL_UNBUFFERED, on); }
/// el_set(el, EL_PREP_TERM, on): the terminal in edit (raw) mode, or back in cooked mode.
static inline int cedit_prepare_terminal(EditLine *el, int on) { return el_set(el, EL_PREP_TERM, on); }
/// el_set(el, EL_REFRESH): forget what is on the screen and draw the prompt and the line again, from
/// where the cursor is.
static inline int cedit_refresh(EditLine *el) { return el_set(el, EL_REFRESH); }
/// el_set(el, EL_CLIENTDATA, data).
static inline int cedit_set_client_data(EditLine *el, void *data) { return el_set(el, EL_CLIENTDATA, data); }
/// el_get(el, EL_CLIENTDATA): the pointer set by cedit_set_client_data, or NULL.
static inline void *cedit_client_data(EditLine *el) {
    void *data = NULL;
    if (el_get(el, EL_CLIENTDATA, &data) != 0) return NULL;
    return data;
}
/// el_get(el, EL_GETTC, "co"): the terminal's width in columns as libedit knows it; 0 if unknown.
static inline int cedit_columns(EditLine *el) {
    int columns = 0;
    if (el_get(el, EL_GETTC, "co", &columns) != 0) return 0;
    return columns;
}
/// el_set(el, EL_ADDFN, name, help, function): a new editor command.
static inline int cedit_add_function(EditLine *el, const char *name, const char *help,
                                     unsigned char (*function)(EditLine *, int)) {
    return el_set(el, EL_ADDFN, name, help, function);
}
/// el_set(el, EL_BIND, key, command, NULL): binds a key (as bind(1) in editrc(5) writes it, "^L").
static inline int cedit_bind(EditLine *el, const char *key, const char *command) {
    return el_set(el, EL_BIND, key, command, NULL);
}
/// history_init() with room for `size` lines, a line equal to the one before not entered twice.
static inline History *cedit_history_init(int size) {
    HistEvent event;
    History *history_ = history_init();
    if (history_ == NULL) return NULL;
    history(history_, &event, H_SETSIZE, size);
    history(history_, &event, H_SETUNIQUE, 1);
    return history_;
}
/// history(h, &event, H_ENTER, line).
static inline int cedit_history_enter(History *history_, const char *line) {
    HistEvent event;
    return history(history_, &event, H_ENTER, line);
}
/// el_set(el, EL_HIST, history, h): Up and Down walk `h`.
static inline int cedit_set_history(EditLine *el, History *history_) { return el_set(el, EL_HIST, history, history_); }

#endif
