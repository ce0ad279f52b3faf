/* emu_source.c: lexer, extern __shared__ rewrite, unsupported-construct scan;
 * see emu_source.h. */
#define _GNU_SOURCE
#include "emu_source.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------- */
/* lexer */

typedef enum { T_IDENT, T_NUM, T_STR, T_CHAR, T_PUNCT, T_DIRECTIVE } tkind;

typedef struct {
    tkind k;
    size_t b, e;   /* [b, e) in the text */
    int line;      /* 1-based line of the first character */
} tok;

typedef struct {
    tok *t;
    int n, cap;
} toks;

static void add_tok(toks *ts, tkind k, size_t b, size_t e, int line) {
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? 2 * ts->cap : 1024;
        ts->t = xrealloc(ts->t, (size_t)ts->cap * sizeof *ts->t);
    }
    ts->t[ts->n++] = (tok){k, b, e, line};
}

static int ident_start(int c) {
    return isalpha(c) || c == '_' || c == '$';
}

static int ident_char(int c) {
    return isalnum(c) || c == '_' || c == '$';
}

/* Skips a quoted literal starting at s[i] (the quote); returns the index past
 * it, counting newlines (only escaped ones can occur). */
static size_t skip_quoted(const char *s, size_t i, int *line) {
    char q = s[i++];
    while (s[i] && s[i] != q) {
        if (s[i] == '\\' && s[i + 1]) {
            if (s[i + 1] == '\n') (*line)++;
            i += 2;
            continue;
        }
        if (s[i] == '\n') break; /* unterminated: stop at the line's end */
        i++;
    }
    return s[i] == q ? i + 1 : i;
}

static void lex(const char *s, toks *ts) {
    size_t i = 0;
    int line = 1, at_line_start = 1;
    while (s[i]) {
        char c = s[i];
        if (c == '\n') {
            line++;
            i++;
            at_line_start = 1;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            i++;
            continue;
        }
        if (c == '\\' && s[i + 1] == '\n') { /* line splice */
            i += 2;
            line++;
            continue;
        }
        if (c == '/' && s[i + 1] == '/') {
            while (s[i] && s[i] != '\n') {
                if (s[i] == '\\' && s[i + 1] == '\n') {
                    i++;
                    line++;
                }
                i++;
            }
            continue;
        }
        if (c == '/' && s[i + 1] == '*') {
            i += 2;
            while (s[i] && !(s[i] == '*' && s[i + 1] == '/')) {
                if (s[i] == '\n') line++;
                i++;
            }
            if (s[i]) i += 2;
            continue;
        }
        if (c == '#' && at_line_start) {
            size_t b = i;
            int l0 = line;
            while (s[i] && s[i] != '\n') {
                if (s[i] == '\\' && s[i + 1] == '\n') {
                    i += 2;
                    line++;
                    continue;
                }
                if (s[i] == '/' && s[i + 1] == '*') { /* a comment may span lines */
                    i += 2;
                    while (s[i] && !(s[i] == '*' && s[i + 1] == '/')) {
                        if (s[i] == '\n') line++;
                        i++;
                    }
                    if (s[i]) i += 2;
                    continue;
                }
                if (s[i] == '/' && s[i + 1] == '/') {
                    while (s[i] && s[i] != '\n') i++;
                    break;
                }
                i++;
            }
            add_tok(ts, T_DIRECTIVE, b, i, l0);
            continue;
        }
        at_line_start = 0;
        size_t b = i;
        int l0 = line;
        if (ident_start((unsigned char)c)) {
            while (ident_char((unsigned char)s[i])) i++;
            /* raw string: R"delim( ... )delim" with an optional encoding prefix */
            size_t n = i - b;
            if (s[i] == '"' && s[i - 1] == 'R' &&
                (n == 1 || (n == 2 && strchr("uUL", s[b])) || (n == 3 && s[b] == 'u' && s[b + 1] == '8'))) {
                size_t d = i + 1;
                while (s[d] && s[d] != '(' && d - i <= 17) d++;
                if (s[d] == '(') {
                    char close[20];
                    size_t dl = d - i - 1;
                    close[0] = ')';
                    memcpy(close + 1, s + i + 1, dl);
                    close[dl + 1] = '"';
                    close[dl + 2] = '\0';
                    const char *end = strstr(s + d, close);
                    size_t stop = end ? (size_t)(end - s) + dl + 2 : strlen(s);
                    for (size_t k = i; k < stop; k++)
                        if (s[k] == '\n') line++;
                    i = stop;
                    add_tok(ts, T_STR, b, i, l0);
                    continue;
                }
            }
            add_tok(ts, T_IDENT, b, i, l0);
            continue;
        }
        if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[i + 1]))) {
            i++;
            for (;;) {
                if ((s[i] == '+' || s[i] == '-') && strchr("eEpP", s[i - 1])) i++;
                else if (ident_char((unsigned char)s[i]) || s[i] == '.' ||
                         (s[i] == '\'' && ident_char((unsigned char)s[i + 1])))
                    i++;
                else break;
            }
            add_tok(ts, T_NUM, b, i, l0);
            continue;
        }
        if (c == '"' || c == '\'') {
            i = skip_quoted(s, i, &line);
            add_tok(ts, c == '"' ? T_STR : T_CHAR, b, i, l0);
            continue;
        }
        if (c == '<' && s[i + 1] == '<' && s[i + 2] == '<') i += 3;
        else if (c == ':' && s[i + 1] == ':') i += 2;
        else i++;
        add_tok(ts, T_PUNCT, b, i, l0);
    }
}

static int is(const char *s, const tok *t, const char *word) {
    size_t n = strlen(word);
    return t->e - t->b == n && memcmp(s + t->b, word, n) == 0;
}

static int is_punct(const char *s, const tok *t, char c) {
    return t->k == T_PUNCT && t->e - t->b == 1 && s[t->b] == c;
}

/* ------------------------------------------------------------------------- */
/* extern __shared__ */

typedef struct {
    int is_ns;       /* a namespace or linkage block (file scope continues) */
    char *name;      /* the namespace's name, "" if anonymous or linkage */
} scope;

/* Classifies the `{` at index i: returns 1 for namespace/extern "C" with *name. */
static int ns_brace(const char *s, const toks *ts, int i, char **name) {
    int j = i - 1;
    while (j >= 0 && ts->t[j].k == T_DIRECTIVE) j--;
    if (j < 0) return 0;
    if (ts->t[j].k == T_STR) { /* extern "C" { */
        int k = j - 1;
        while (k >= 0 && ts->t[k].k == T_DIRECTIVE) k--;
        if (k >= 0 && is(s, &ts->t[k], "extern")) {
            *name = xstrdup("");
            return 1;
        }
        return 0;
    }
    if (is(s, &ts->t[j], "namespace")) {
        *name = xstrdup("");
        return 1;
    }
    /* namespace a::b { */
    int k = j;
    while (k >= 0 && ts->t[k].k == T_IDENT) {
        int p = k - 1;
        if (p >= 0 && is(s, &ts->t[p], "::")) {
            k = p - 1;
            continue;
        }
        break;
    }
    if (k < 0 || ts->t[k].k != T_IDENT) return 0;
    int before = k - 1;
    if (before >= 0 && is(s, &ts->t[before], "namespace")) {
        *name = xstrndup(s + ts->t[k].b, ts->t[j].e - ts->t[k].b);
        return 1;
    }
    return 0;
}

/* Index past the group opened at ts[i] ("(" or "["), or n. */
static int skip_group(const char *s, const toks *ts, int i, int n) {
    int depth = 0;
    for (; i < n; i++) {
        if (is_punct(s, &ts->t[i], '(') || is_punct(s, &ts->t[i], '[')) depth++;
        else if (is_punct(s, &ts->t[i], ')') || is_punct(s, &ts->t[i], ']')) {
            if (--depth == 0) return i + 1;
        }
    }
    return n;
}

/* Text of tokens [a, b) of the kept list, separated by spaces. */
static void add_toks(hn_sb *sb, const char *s, const toks *ts, const int *keep, int a, int b) {
    for (int k = a; k < b; k++) {
        if (k > a) hn_sb_addc(sb, ' ');
        hn_sb_add(sb, s + ts->t[keep[k]].b, ts->t[keep[k]].e - ts->t[keep[k]].b);
    }
}

/* The replacement of a static (not extern) __shared__ declaration, tokens
 * [start, end) with `;` at end, or NULL when its shape is not one this reads
 * with certainty (the declaration then stays as it is: __shared__ is also a
 * macro for `static thread_local`, which works, only without the guard).
 *
 *   __shared__ __align__(16) float a[T][T], b;
 * becomes, on the same line,
 *   typedef float hn_emu_sht_L_0[T][T]; static thread_local hn_emu_sht_L_0 &a =
 *   *(hn_emu_sht_L_0 *)hn_emu_static_shared(sizeof(hn_emu_sht_L_0), <align>, __LINE__,
 *   __FILE__, "a"); typedef float hn_emu_sht_L_1; ...
 * so every variable is storage of its own, per block, ending at a guard page. */
static char *static_shared_decl(const char *s, const toks *ts, int start, int end) {
    int *keep = xmalloc((size_t)(end - start + 1) * sizeof *keep);
    int nk = 0;
    char *align = NULL;
    int ok = 1, body = 0;
    for (int k = start; k < end && ok;) {
        const tok *p = &ts->t[k];
        if (p->k == T_IDENT && (is(s, p, "__shared__") || is(s, p, "static"))) {
            k++;
            continue;
        }
        if (p->k == T_IDENT && (is(s, p, "thread_local") || is(s, p, "constexpr") ||
                                is(s, p, "typedef") || is(s, p, "using") || is(s, p, "return"))) {
            ok = 0;
            break;
        }
        if (p->k == T_IDENT && (is(s, p, "__align__") || is(s, p, "alignas") ||
                                is(s, p, "__attribute__") || is(s, p, "__declspec")) &&
            k + 1 < end && is_punct(s, &ts->t[k + 1], '(')) {
            int close = skip_group(s, ts, k + 1, end);
            if (is(s, p, "__align__") || is(s, p, "alignas")) {
                size_t b = ts->t[k + 1].e, e = ts->t[close - 1].b;
                free(align);
                align = xstrndup(s + b, e - b);
            } else if (is(s, p, "__attribute__")) {
                for (int q = k + 1; q < close; q++)
                    if (is(s, &ts->t[q], "aligned") || is(s, &ts->t[q], "__aligned__")) {
                        free(align);
                        if (q + 1 < close && is_punct(s, &ts->t[q + 1], '(')) {
                            int qc = skip_group(s, ts, q + 1, close);
                            align = xstrndup(s + ts->t[q + 1].e, ts->t[qc - 1].b - ts->t[q + 1].e);
                        } else {
                            align = xstrdup("16");
                        }
                    }
            }
            k = close;
            continue;
        }
        if (is_punct(s, p, '[') && k + 1 < end && is_punct(s, &ts->t[k + 1], '[')) {
            k = skip_group(s, ts, k, end); /* [[attribute]] */
            continue;
        }
        if (is_punct(s, p, '{')) {
            /* a struct defined in place, `__shared__ struct { float v[N]; int n; } sm;`:
             * its body is part of the type, kept whole (then one declarator only) */
            int tagged = 0;
            for (int q = 0; q < nk; q++)
                if (is(s, &ts->t[keep[q]], "struct") || is(s, &ts->t[keep[q]], "union") ||
                    is(s, &ts->t[keep[q]], "class"))
                    tagged = 1;
            int depth = 0;
            for (; tagged && k < end; k++) {
                const tok *q = &ts->t[k];
                if (q->k == T_DIRECTIVE || is_punct(s, q, '=') || (q->k == T_IDENT && is(s, q, "static"))) ok = 0;
                keep[nk++] = k;
                if (is_punct(s, q, '{')) depth++;
                else if (is_punct(s, q, '}') && --depth == 0) break;
            }
            if (!tagged || k >= end) ok = 0;
            body = 1;
            k++;
            continue;
        }
        if (p->k == T_DIRECTIVE || is_punct(s, p, '=')) ok = 0;
        keep[nk++] = k++;
    }
    hn_sb rep;
    hn_sb_init(&rep);
    int a = 0, n_decl = 0;
    hn_sb type;
    hn_sb_init(&type);
    while (ok && a < nk) {
        /* one declarator: to the next comma outside (), [] and <> */
        int b = a, paren = 0, angle = 0, br = -1;
        for (; b < nk; b++) {
            const tok *p = &ts->t[keep[b]];
            if (is_punct(s, p, '(') || is_punct(s, p, '[') || is_punct(s, p, '{')) {
                if (is_punct(s, p, '(') && paren == 0 && angle == 0) ok = 0; /* f(), (*p)[] */
                if (is_punct(s, p, '[') && paren == 0 && br < 0) br = b;
                paren++;
            } else if (is_punct(s, p, ')') || is_punct(s, p, ']') || is_punct(s, p, '}')) {
                paren--;
            } else if (paren == 0 && is_punct(s, p, '<')) {
                angle++;
            } else if (paren == 0 && is_punct(s, p, '>')) {
                angle--;
            } else if (paren == 0 && angle == 0 && is_punct(s, p, ',')) {
                break;
            }
        }
        if (paren != 0 || angle != 0 || (body && n_decl > 0)) ok = 0; /* two types of one body */
        if (!ok) break;
        int name_at = br >= 0 ? br - 1 : b - 1;
        if (name_at < a || ts->t[keep[name_at]].k != T_IDENT) {
            ok = 0;
            break;
        }
        int ptr_from = name_at;
        while (ptr_from > a && (is_punct(s, &ts->t[keep[ptr_from - 1]], '*') ||
                                is_punct(s, &ts->t[keep[ptr_from - 1]], '&')))
            ptr_from--;
        if (n_decl == 0) {
            if (ptr_from == a) { /* no type */
                ok = 0;
                break;
            }
            add_toks(&type, s, ts, keep, a, ptr_from);
        }
        const tok *nt = &ts->t[keep[name_at]];
        int line = nt->line;
        char tname[64];
        snprintf(tname, sizeof tname, "hn_emu_sht_%d_%d", line, n_decl);
        hn_sb_addf(&rep, "%stypedef %s ", rep.len ? " " : "", type.buf);
        add_toks(&rep, s, ts, keep, ptr_from, name_at);
        hn_sb_addf(&rep, " %s ", tname);
        add_toks(&rep, s, ts, keep, name_at + 1, b);
        hn_sb_addf(&rep, "; static thread_local %s &%.*s = *(%s *)hn_emu_static_shared(sizeof(%s), ",
                   tname, (int)(nt->e - nt->b), s + nt->b, tname, tname);
        if (align)
            hn_sb_addf(&rep, "(%s) > alignof(%s) ? (%s) : alignof(%s)", align, tname, align, tname);
        else
            hn_sb_addf(&rep, "alignof(%s)", tname);
        hn_sb_addf(&rep, ", __LINE__, __FILE__, \"%.*s\");", (int)(nt->e - nt->b), s + nt->b);
        n_decl++;
        a = b + 1;
    }
    hn_sb_free(&type);
    free(keep);
    free(align);
    if (!ok || n_decl == 0) {
        hn_sb_free(&rep);
        return NULL;
    }
    return hn_sb_detach(&rep);
}

int emu_src_rewrite_shared(const char *s, const char *path, emu_src_rewrite *out, hn_err *err) {
    memset(out, 0, sizeof *out);
    toks ts = {0};
    lex(s, &ts);
    hn_sb sb;
    hn_sb_init(&sb);
    scope *stack = NULL;
    int depth = 0, cap = 0;
    size_t copied = 0; /* text before this offset is already in sb */
    int rc = 0;
    for (int i = 0; i < ts.n; i++) {
        const tok *t = &ts.t[i];
        if (is_punct(s, t, '{')) {
            if (depth == cap) {
                cap = cap ? 2 * cap : 16;
                stack = xrealloc(stack, (size_t)cap * sizeof *stack);
            }
            char *name = NULL;
            stack[depth].is_ns = ns_brace(s, &ts, i, &name);
            stack[depth].name = name;
            depth++;
            continue;
        }
        if (is_punct(s, t, '}')) {
            if (depth > 0) free(stack[--depth].name);
            continue;
        }
        if (t->k != T_IDENT || !is(s, t, "__shared__")) continue;
        /* the declaration around it: back to a boundary, forward to ';' */
        int start = i;
        while (start > 0) {
            const tok *p = &ts.t[start - 1];
            if (p->k == T_DIRECTIVE || is_punct(s, p, ';') || is_punct(s, p, '{') ||
                is_punct(s, p, '}') || is_punct(s, p, ':'))
                break;
            if (is_punct(s, p, ')')) { /* __align__(16), __attribute__((...)) */
                int d = 0, k = start - 1;
                for (; k >= 0; k--) {
                    if (is_punct(s, &ts.t[k], ')')) d++;
                    else if (is_punct(s, &ts.t[k], '(') && --d == 0) break;
                }
                start = k < 0 ? 0 : k;
                continue;
            }
            start--;
        }
        int end = i, d = 0;
        while (end < ts.n) {
            const tok *p = &ts.t[end];
            if (is_punct(s, p, '(') || is_punct(s, p, '[') || is_punct(s, p, '{')) d++;
            else if (is_punct(s, p, ')') || is_punct(s, p, ']') || is_punct(s, p, '}')) d--;
            else if (d == 0 && is_punct(s, p, ';')) break;
            end++;
        }
        int has_extern = 0;
        for (int k = start; k < end; k++)
            if (ts.t[k].k == T_IDENT && is(s, &ts.t[k], "extern")) has_extern = 1;
        if (end >= ts.n) break;
        if (!has_extern) {
            char *rep = static_shared_decl(s, &ts, start, end);
            if (rep) {
                size_t b0 = ts.t[start].b, e0 = ts.t[end].e;
                hn_sb_add(&sb, s + copied, b0 - copied);
                hn_sb_adds(&sb, rep);
                for (size_t k = b0; k < e0; k++)
                    if (s[k] == '\n') hn_sb_addc(&sb, '\n');
                copied = e0;
                out->n_rewritten++;
                free(rep);
            }
            i = end;
            continue;
        }
        int file_scope = 1;
        for (int k = 0; k < depth; k++)
            if (!stack[k].is_ns) file_scope = 0;
        /* keep the tokens that make up the type and declarators */
        int *keep = xmalloc((size_t)(end - start) * sizeof *keep);
        int nk = 0;
        for (int k = start; k < end;) {
            const tok *p = &ts.t[k];
            if (p->k == T_IDENT && (is(s, p, "extern") || is(s, p, "__shared__") ||
                                    is(s, p, "static"))) {
                k++;
                continue;
            }
            if (p->k == T_IDENT && (is(s, p, "__align__") || is(s, p, "alignas") ||
                                    is(s, p, "__attribute__") || is(s, p, "__declspec")) &&
                k + 1 < end && is_punct(s, &ts.t[k + 1], '(')) {
                k = skip_group(s, &ts, k + 1, end);
                continue;
            }
            if (is_punct(s, p, '[') && k + 1 < end && is_punct(s, &ts.t[k + 1], '[')) {
                k = skip_group(s, &ts, k, end); /* [[attribute]] */
                continue;
            }
            keep[nk++] = k;
            k++;
        }
        /* split into declarators at depth-0 commas; the first carries the type */
        hn_sb rep;
        hn_sb_init(&rep);
        int a = 0, first = 1, ok = 1;
        char *type = NULL;
        while (a < nk && ok) {
            int b = a, dd = 0;
            while (b < nk) {
                const tok *p = &ts.t[keep[b]];
                if (is_punct(s, p, '(') || is_punct(s, p, '[')) dd++;
                else if (is_punct(s, p, ')') || is_punct(s, p, ']')) dd--;
                else if (dd == 0 && is_punct(s, p, ',')) break;
                b++;
            }
            /* the declarator's name: the identifier before the first '[' (or the
             * last identifier when there is none) */
            int br = -1;
            for (int k = a; k < b; k++)
                if (is_punct(s, &ts.t[keep[k]], '[')) {
                    br = k;
                    break;
                }
            int name_at = br >= 0 ? br - 1 : b - 1;
            while (name_at >= a && ts.t[keep[name_at]].k != T_IDENT) name_at--;
            if (name_at < a || (first && name_at == a)) {
                ok = 0;
                break;
            }
            /* pointer operators between the type and the name belong to it */
            int ptr_from = name_at;
            while (ptr_from > a && (is_punct(s, &ts.t[keep[ptr_from - 1]], '*') ||
                                    is_punct(s, &ts.t[keep[ptr_from - 1]], '&')))
                ptr_from--;
            if (first) {
                hn_sb tsb;
                hn_sb_init(&tsb);
                for (int k = a; k < ptr_from; k++) {
                    if (k > a) hn_sb_addc(&tsb, ' ');
                    hn_sb_add(&tsb, s + ts.t[keep[k]].b, ts.t[keep[k]].e - ts.t[keep[k]].b);
                }
                type = hn_sb_detach(&tsb);
            }
            hn_sb ptrs;
            hn_sb_init(&ptrs);
            for (int k = ptr_from; k < name_at; k++)
                hn_sb_add(&ptrs, s + ts.t[keep[k]].b, ts.t[keep[k]].e - ts.t[keep[k]].b);
            const tok *nt = &ts.t[keep[name_at]];
            char *name = xstrndup(s + nt->b, nt->e - nt->b);
            /* the pointer type: "T *", "volatile unsigned char **" */
            char *ptype = xasprintf("%s %s*", type, ptrs.buf);
            if (rep.len) hn_sb_addc(&rep, ' ');
            if (br < 0) {
                if (file_scope) {
                    rc = hn_errf(err,
                                 "%s:%d: extern __shared__ scalar '%s' at file scope is not "
                                 "supported by the CPU emulator; declare an array (T %s[])",
                                 path, ts.t[i].line, name, name);
                    ok = 0;
                } else {
                    hn_sb_addf(&rep, "%s%s%s &%s = *(%s)hn_emu_dyn_shared();", type,
                               ptrs.len ? " " : "", ptrs.buf, name, ptype);
                }
            } else if (file_scope) {
                hn_sb_addf(&rep, "static thread_local %s%s;", ptype, name);
                hn_sb qual;
                hn_sb_init(&qual);
                for (int k = 0; k < depth; k++)
                    if (stack[k].name && stack[k].name[0]) hn_sb_addf(&qual, "%s::", stack[k].name);
                hn_sb_adds(&qual, name);
                out->fs_names = xrealloc(out->fs_names, (size_t)(out->n_fs + 1) * sizeof(char *));
                out->fs_names[out->n_fs++] = hn_sb_detach(&qual);
            } else {
                hn_sb_addf(&rep, "%sconst %s = (%s)hn_emu_dyn_shared();", ptype, name, ptype);
            }
            free(ptype);
            free(name);
            hn_sb_free(&ptrs);
            first = 0;
            a = b + 1;
        }
        free(type);
        free(keep);
        if (!ok) {
            if (rc == 0)
                rc = hn_errf(err, "%s:%d: cannot read this extern __shared__ declaration",
                             path, ts.t[i].line);
            hn_sb_free(&rep);
            break;
        }
        /* splice: text before the declaration, the replacement, its newlines */
        size_t b0 = ts.t[start].b, e0 = ts.t[end].e;
        hn_sb_add(&sb, s + copied, b0 - copied);
        hn_sb_add(&sb, rep.buf, rep.len);
        for (size_t k = b0; k < e0; k++)
            if (s[k] == '\n') hn_sb_addc(&sb, '\n');
        copied = e0;
        out->n_rewritten++;
        hn_sb_free(&rep);
        i = end;
    }
    for (int k = 0; k < depth; k++) free(stack[k].name);
    free(stack);
    free(ts.t);
    if (rc != 0) {
        hn_sb_free(&sb);
        emu_src_rewrite_free(out);
        return -1;
    }
    hn_sb_adds(&sb, s + copied);
    out->text = hn_sb_detach(&sb);
    return 0;
}

void emu_src_rewrite_free(emu_src_rewrite *r) {
    if (!r) return;
    free(r->text);
    for (int i = 0; i < r->n_fs; i++) free(r->fs_names[i]);
    free(r->fs_names);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------------- */
/* unsupported constructs */

/* Parses a line marker `# N "file" flags...`; returns 1 on success. */
static int line_marker(const char *s, const tok *t, int *num, char *file, size_t fsize,
                       int *system) {
    const char *p = s + t->b + 1;
    const char *e = s + t->e;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    if (p + 4 < e && strncmp(p, "line", 4) == 0) p += 4;
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    if (p >= e || !isdigit((unsigned char)*p)) return 0;
    *num = atoi(p);
    while (p < e && isdigit((unsigned char)*p)) p++;
    while (p < e && *p == ' ') p++;
    if (p < e && *p == '"') {
        const char *q = p + 1;
        size_t n = 0;
        while (q < e && *q != '"' && n + 1 < fsize) {
            if (*q == '\\' && q + 1 < e) q++;
            file[n++] = *q++;
        }
        file[n] = '\0';
        p = q < e ? q + 1 : q;
    }
    *system = 0;
    for (; p < e; p++)
        if (*p == '3' && (p[-1] == ' ')) *system = 1;
    return 1;
}

/* The first token of the statement or declaration head that ends before token
 * j: just after the last ';', '{', '}' or directive before it. */
static int head_start(const char *s, const toks *ts, int j) {
    while (j > 0) {
        const tok *t = &ts->t[j - 1];
        if (t->k == T_DIRECTIVE || (t->k == T_PUNCT && (is(s, t, ";") || is(s, t, "{") || is(s, t, "}")))) break;
        j--;
    }
    return j;
}

/* Whether the kernel launch at token k sits in host code: no function around it
 * is declared __global__ or __device__ (walking out through every enclosing
 * brace: blocks, lambdas, the function, up to a namespace or the file). The
 * preprocessed text cannot tell, as the shim defines both away. */
static int launch_in_host_code(const char *s, const toks *ts, int k) {
    int depth = 0;
    for (int j = k - 1; j >= 0; j--) {
        const tok *t = &ts->t[j];
        if (t->k != T_PUNCT) continue;
        if (is(s, t, "}")) depth++;
        if (!is(s, t, "{")) continue;
        if (depth > 0) {
            depth--;
            continue;
        }
        for (int h = head_start(s, ts, j); h < j; h++) {
            const tok *w = &ts->t[h];
            if (w->k != T_IDENT) continue;
            if (is(s, w, "__global__") || is(s, w, "__device__")) return 0;
            if (is(s, w, "namespace") || is(s, w, "extern")) return 1;
        }
    }
    return 1;
}

/* launch_in_host_code for the `<<<` on a line of a file, or 0 when the file
 * cannot be read or has none there. */
static int file_launch_in_host_code(const char *path, int line) {
    char *text = NULL;
    hn_err err;
    if (hn_read_file(path, &text, NULL, &err) != 0) return 0;
    toks ts = {0};
    lex(text, &ts);
    int host = 0;
    for (int i = 0; i < ts.n; i++)
        if (ts.t[i].line == line && ts.t[i].k == T_PUNCT && is(text, &ts.t[i], "<<<")) {
            host = launch_in_host_code(text, &ts, i);
            break;
        }
    free(ts.t);
    free(text);
    return host;
}

int emu_src_scan_unsupported(const char *s, const char *path, int preprocessed,
                             const char *skip_dir, char *what, size_t size) {
    toks ts = {0};
    lex(s, &ts);
    char file[1024];
    snprintf(file, sizeof file, "%s", path);
    int base_num = 1, base_line = 1, system = 0, found = 0;
    size_t skip_len = skip_dir ? strlen(skip_dir) : 0;
    for (int i = 0; i < ts.n; i++) {
        const tok *t = &ts.t[i];
        if (t->k == T_DIRECTIVE) {
            int num, sys;
            char f[1024];
            snprintf(f, sizeof f, "%s", file);
            if (preprocessed && line_marker(s, t, &num, f, sizeof f, &sys)) {
                base_num = num;
                base_line = t->line + 1;
                system = sys;
                snprintf(file, sizeof file, "%s", f);
            }
            continue;
        }
        if (preprocessed && (system || file[0] == '<' ||
                             (skip_len && strncmp(file, skip_dir, skip_len) == 0)))
            continue;
        const char *desc = NULL;
        if (t->k == T_IDENT && (is(s, t, "asm") || is(s, t, "__asm__") || is(s, t, "__asm")))
            desc = "inline asm is not supported by the CPU emulator (PTX cannot run on the host)";
        else if (t->k == T_PUNCT && is(s, t, "<<<"))
            desc = "dynamic parallelism (a kernel launch <<<...>>> in device code) is not "
                   "supported by the CPU emulator";
        if (!desc) continue;
        if (!found++) {
            int line = preprocessed ? base_num + (t->line - base_line) : t->line;
            int host = t->k == T_PUNCT && (preprocessed ? file_launch_in_host_code(file, line)
                                                         : launch_in_host_code(s, &ts, i));
            if (host)
                desc = "a kernel launch <<<...>>> in host code: the harness launches the kernels itself "
                       "and compiles device code only (NVRTC cannot compile host code either); put host "
                       "code under #ifndef __CUDA_ARCH__, which nvcc's device pass, NVRTC and the CPU "
                       "emulator all skip";
            snprintf(what, size, "%s:%d: %s", file, line, desc);
        }
    }
    free(ts.t);
    return found;
}

int emu_src_uses_ident(const char *text, const char *word) {
    toks ts = {0};
    lex(text, &ts);
    int found = 0;
    for (int i = 0; i < ts.n && !found; i++) found = ts.t[i].k == T_IDENT && is(text, &ts.t[i], word);
    free(ts.t);
    return found;
}

int emu_src_declares_device_vars(const char *text) {
    toks ts = {0};
    lex(text, &ts);
    int found = 0;
    for (int i = 0; i < ts.n && !found; i++) {
        if (ts.t[i].k != T_IDENT) continue;
        if (is(text, &ts.t[i], "__managed__")) {
            found = 1;
            break;
        }
        if (!is(text, &ts.t[i], "__device__")) continue;
        /* a function's `(` (or a body) comes before any `;`, `=` or `[` */
        for (int j = i + 1; j < ts.n; j++) {
            const tok *t = &ts.t[j];
            if (t->k != T_PUNCT) continue;
            char c = text[t->b];
            if (c == '(' || c == '{') break;
            if (c == ';' || c == '=' || c == '[' || c == ',') {
                found = 1;
                break;
            }
        }
    }
    free(ts.t);
    return found;
}

void emu_src_quoted_includes(const char *text, const char *dir, const char *const *include_dirs,
                             int n_include_dirs, char ***list, int *n) {
    toks ts = {0};
    lex(text, &ts);
    for (int i = 0; i < ts.n; i++) {
        const tok *t = &ts.t[i];
        if (t->k != T_DIRECTIVE) continue;
        const char *p = text + t->b + 1, *e = text + t->e;
        while (p < e && (*p == ' ' || *p == '\t')) p++;
        if (e - p < 7 || strncmp(p, "include", 7) != 0) continue;
        p += 7;
        while (p < e && (*p == ' ' || *p == '\t')) p++;
        if (p >= e || *p != '"') continue;
        const char *q = memchr(p + 1, '"', (size_t)(e - p - 1));
        if (!q) continue;
        char *name = xstrndup(p + 1, (size_t)(q - p - 1));
        char *found = NULL;
        char *cand = hn_path_join(dir, name);
        if (hn_file_exists(cand)) found = cand;
        else free(cand);
        for (int d = 0; !found && d < n_include_dirs; d++) {
            cand = hn_path_join(include_dirs[d], name);
            if (hn_file_exists(cand)) found = cand;
            else free(cand);
        }
        free(name);
        if (!found) continue;
        int dup = 0;
        for (int k = 0; k < *n && !dup; k++) dup = strcmp((*list)[k], found) == 0;
        if (dup) {
            free(found);
            continue;
        }
        *list = xrealloc(*list, (size_t)(*n + 1) * sizeof **list);
        (*list)[(*n)++] = found;
    }
    free(ts.t);
}
