/* lws-echo.c: a WebSocket echo server on libwebsockets (Debian's libwebsockets-dev, 4.1.6), the C
 * peer of scripts/bench-websocket.sh.
 *
 *   cc -O2 -o lws-echo lws-echo.c $(pkg-config --cflags --libs libwebsockets)
 *   lws-echo -p PORT
 *
 * Upgrades any path on 127.0.0.1:PORT; every message goes back with its type (text as text, binary
 * as binary), reassembled from whatever pieces lws hands over (rx_buffer_size 64 KiB) and queued per
 * connection, each written from LWS_CALLBACK_SERVER_WRITEABLE (lws's rule: one lws_write per
 * writeable callback). lws itself answers pings and echoes the peer's Close. No permessage-deflate
 * (no extensions registered), one service thread, lws's default limits otherwise. SIGTERM ends it.
 */
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct message {
    struct message *next;
    size_t len;
    int binary;
    unsigned char buf[]; /* LWS_PRE bytes of room, then the payload */
};

struct session {
    struct message *head, *tail; /* queued echoes */
    unsigned char *partial;      /* the message being received (LWS_PRE + bytes) */
    size_t len, cap;
};

static volatile int stopping;

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
    struct session *s = user;
    switch (reason) {
    case LWS_CALLBACK_RECEIVE: {
        if (s->len + len > s->cap) {
            size_t cap = s->cap ? s->cap : 4096;
            while (cap < s->len + len) cap *= 2;
            unsigned char *grown = realloc(s->partial, LWS_PRE + cap);
            if (!grown) return -1;
            s->partial = grown;
            s->cap = cap;
        }
        memcpy(s->partial + LWS_PRE + s->len, in, len);
        s->len += len;
        if (!lws_is_final_fragment(wsi) || lws_remaining_packet_payload(wsi)) return 0;
        struct message *m = malloc(sizeof *m + LWS_PRE + s->len);
        if (!m) return -1;
        m->next = NULL;
        m->len = s->len;
        m->binary = lws_frame_is_binary(wsi);
        memcpy(m->buf + LWS_PRE, s->partial + LWS_PRE, s->len);
        s->len = 0;
        if (s->tail) s->tail->next = m; else s->head = m;
        s->tail = m;
        lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_SERVER_WRITEABLE: {
        struct message *m = s->head;
        if (!m) return 0;
        if (lws_write(wsi, m->buf + LWS_PRE, m->len, m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT) < (int)m->len) return -1;
        s->head = m->next;
        if (!s->head) s->tail = NULL;
        free(m);
        if (s->head) lws_callback_on_writable(wsi);
        return 0;
    }
    case LWS_CALLBACK_CLOSED:
        while (s->head) { struct message *m = s->head; s->head = m->next; free(m); }
        free(s->partial);
        memset(s, 0, sizeof *s);
        return 0;
    default:
        return 0;
    }
}

static const struct lws_protocols protocols[] = {
    {"echo", callback, sizeof(struct session), 65536, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void on_term(int sig) { (void)sig; stopping = 1; }

int main(int argc, char **argv) {
    int port = 9203;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-p") && i + 1 < argc) port = atoi(argv[++i]);
    lws_set_log_level(LLL_ERR, NULL);
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = port;
    info.iface = "127.0.0.1";
    info.protocols = protocols; /* the first is the default for any path and any subprotocol */
    info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
    struct lws_context *context = lws_create_context(&info);
    if (!context) { fprintf(stderr, "lws-echo: cannot start\n"); return 1; }
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    printf("lws-echo listening on ws://127.0.0.1:%d/ (pid %d, libwebsockets %s)\n", port, getpid(), lws_get_library_version());
    fflush(stdout);
    while (!stopping && lws_service(context, 0) >= 0) {}
    lws_context_destroy(context);
    return 0;
}
