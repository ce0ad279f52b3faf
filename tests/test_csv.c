/* test_csv.c: the CSV writer and reader (harness/csv.c). */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csv.h"
#include "hn_test.h"

static char *tmp_path(const char *name) {
    const char *dir = getenv("HARNESS_TMP");
    if (!dir) dir = "/tmp";
    hn_mkdirs(dir, NULL);
    return xasprintf("%s/%s.%d", dir, name, (int)getpid());
}

static void test_quoting(void) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_csv_quote(&sb, "plain");
    hn_sb_addc(&sb, '|');
    hn_csv_quote(&sb, "a,b");
    hn_sb_addc(&sb, '|');
    hn_csv_quote(&sb, "say \"hi\"");
    hn_sb_addc(&sb, '|');
    hn_csv_quote(&sb, "two\nlines");
    hn_sb_addc(&sb, '|');
    hn_csv_quote(&sb, "");
    CHECK_STR(sb.buf, "plain|\"a,b\"|\"say \"\"hi\"\"\"|\"two\nlines\"|");
    hn_sb_free(&sb);
}

static void test_roundtrip(void) {
    char *path = tmp_path("roundtrip.csv");
    const char *cols[] = {"case", "label", "time_median_ms", "reason"};
    hn_csv *c;
    hn_err err;
    CHECK(hn_csv_open(path, cols, 4, &c, &err) == 0);
    hn_csv_setf(c, 0, "%d", 7);
    hn_csv_set_named(c, "label", "128x128x32 -> 512, f:9x9");
    hn_csv_setf_named(c, "time_median_ms", "%.3f", 1.25);
    hn_csv_set_named(c, "reason", "compile error: \"x\" undefined\nat line 3");
    hn_csv_set_named(c, "no_such_column", "ignored");
    CHECK(hn_csv_write_row(c, &err) == 0);
    hn_csv_set(c, 0, "8"); /* other fields left empty */
    CHECK(hn_csv_write_row(c, &err) == 0);
    hn_csv_close(c);

    hn_table t;
    CHECK(hn_table_load(path, &t, &err) == 0);
    CHECK_INT(t.n_cols, 4);
    CHECK_INT(t.n_rows, 2);
    CHECK_STR(t.header[2], "time_median_ms");
    CHECK_STR(hn_table_get(&t, 0, "label"), "128x128x32 -> 512, f:9x9");
    CHECK_STR(hn_table_get(&t, 0, "time_median_ms"), "1.250");
    CHECK_STR(hn_table_get(&t, 0, "reason"), "compile error: \"x\" undefined\nat line 3");
    CHECK_STR(hn_table_get(&t, 1, "case"), "8");
    CHECK_STR(hn_table_get(&t, 1, "label"), "");
    CHECK_STR(hn_table_get(&t, 1, "missing"), "");
    CHECK_INT(hn_table_col(&t, "reason"), 3);
    hn_table_free(&t);
    unlink(path);
    free(path);
}

/* A run that dies mid-sweep leaves every finished row readable. */
static void test_partial_after_crash(void) {
    char *path = tmp_path("partial.csv");
    pid_t pid = fork();
    if (pid == 0) {
        const char *cols[] = {"case", "status"};
        hn_csv *c;
        if (hn_csv_open(path, cols, 2, &c, NULL) != 0) _exit(3);
        for (int i = 0; i < 3; i++) {
            hn_csv_setf(c, 0, "%d", i);
            hn_csv_set(c, 1, "ok");
            hn_csv_write_row(c, NULL);
        }
        hn_csv_set(c, 0, "3"); /* a row in progress, never written */
        raise(SIGKILL);
        _exit(4);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    hn_table t;
    hn_err err;
    CHECK(hn_table_load(path, &t, &err) == 0);
    CHECK_INT(t.n_rows, 3);
    CHECK_STR(hn_table_get(&t, 2, "case"), "2");
    CHECK_STR(hn_table_get(&t, 2, "status"), "ok");
    hn_table_free(&t);
    unlink(path);
    free(path);
}

static void test_reader_errors(void) {
    hn_table t;
    hn_err err;
    CHECK(hn_table_parse("a,b\n1,2,3\n", "x.csv", &t, &err) != 0);
    CHECK_CONTAINS(err.msg, "x.csv:2: 3 fields, but the header has 2");
    CHECK(hn_table_parse("a,b\n\"1,2\n", "y.csv", &t, &err) != 0);
    CHECK_CONTAINS(err.msg, "unterminated");
    CHECK(hn_table_parse("", "z.csv", &t, &err) != 0);
    CHECK(hn_table_parse("a,b\r\n1,2\r\n\r\n3\r\n", "w.csv", &t, &err) == 0);
    CHECK_INT(t.n_rows, 2);
    CHECK_STR(hn_table_get(&t, 1, "a"), "3");
    CHECK_STR(hn_table_get(&t, 1, "b"), "");
    hn_table_free(&t);
    /* a byte-order mark (a CSV saved by a spreadsheet) is not part of the
     * first column's name */
    CHECK(hn_table_parse("\xEF\xBB\xBF" "case,b\r\n7,\"x, y\"\r\n", "bom.csv", &t, &err) == 0);
    CHECK_INT(hn_table_col(&t, "case"), 0);
    CHECK_STR(hn_table_get(&t, 0, "case"), "7");
    CHECK_STR(hn_table_get(&t, 0, "b"), "x, y");
    hn_table_free(&t);
    CHECK(hn_table_parse("\xEF\xBB\xBF", "bomonly.csv", &t, &err) != 0);
    CHECK_CONTAINS(err.msg, "empty file");
}

int main(void) {
    test_quoting();
    test_roundtrip();
    test_partial_after_crash();
    test_reader_errors();
    return hn_test_exit();
}
