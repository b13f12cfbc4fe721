/*
 * Rich outputs: matplotlib figures as PNG images, display(), the rich
 * representations of a cell's last expression, their order and message
 * numbers, and the display limits. The group's session has the defaults.
 */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

static ci_session *S;

static int group_setup(void **state)
{
    return h_group_session(&S, NULL);
}

/* A session with display limits and a figure dpi (0: keep the default). */
static ci_session *display_session(size_t per_output, size_t per_run, unsigned dpi)
{
    ci_config *cfg = h_config(NULL);
    ci_session *s = NULL;
    if (per_output)
        assert_int_equal(ci_config_set_display_limits(cfg, per_output, per_run), CI_OK);
    if (dpi)
        assert_int_equal(ci_config_set_figure_dpi(cfg, dpi), CI_OK);
    int rc = ci_session_new(&s, cfg);
    ci_config_free(cfg);
    if (rc != CI_OK)
        fail_msg("ci_session_new: %d (%s): %s", rc, ci_strerror(rc), ci_session_errmsg(NULL));
    return s;
}

/* Fails, printing the result, unless @r has exactly @n outputs. */
static void assert_output_count(const ci_result *r, size_t n)
{
    if (ci_result_output_count(r) != n) {
        h_dump(r);
        h_dump_rich(r);
        fail_msg("%zu outputs, expected %zu", ci_result_output_count(r), n);
    }
}

/*
 * Figures are rendered as IPython's inline backend renders them: at the
 * figure's dpi, cropped to what is drawn (bbox_inches='tight', 0.1 inch
 * of padding). The expected size is computed in the cell by matplotlib
 * itself, from the figure's tight bounding box, and printed as
 * "size WxH": the cell display_size defines size(fig) for that, and the
 * figure cells run after it (h_cells).
 */

/* The @nth "size WxH" line of @r's stdout. */
static void printed_size(const ci_result *r, size_t nth, uint32_t *w, uint32_t *h)
{
    const char *p = ci_result_stdout(r, NULL);
    for (size_t k = 0;; k++) {
        p = strstr(p, "size ");
        if (!p) {
            h_dump(r);
            fail_msg("no size line number %zu in stdout", nth);
        }
        if (k == nth) {
            assert_int_equal(sscanf(p, "size %ux%u", w, h), 2);
            return;
        }
        p += 5;
    }
}

/* Asserts that the @nth image/png output of @r is the size the @nth
 * "size" line printed (to 2 pixels, for rounding), of type display_data,
 * in message @message; returns its index. */
static size_t assert_png(const ci_result *r, size_t nth, size_t message)
{
    size_t i = h_find_mime(r, "image/png", nth);
    uint32_t gw = 0, gh = 0, w = 0, h = 0;
    printed_size(r, nth, &w, &h);
    h_png_size(r, i, &gw, &gh);
    if (gw + 2 < w || gw > w + 2 || gh + 2 < h || gh > h + 2) {
        h_dump_rich(r);
        fail_msg("PNG number %zu is %ux%u, expected %ux%u", nth, gw, gh, w, h);
    }
    h_assert_output(r, i, "image/png", NULL, CI_OUTPUT_DISPLAY_DATA, message);
    return i;
}

/* ------------------------------------------------------------- figures */

static void test_figure_is_a_tight_png_at_the_figures_dpi(void **state)
{
    char *cell = h_cells("display_size", "display_tight_png");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_null(ci_result_value(r));
    assert_int_equal(h_count_mime(r, "image/png"), 1);
    size_t i = assert_png(r, 0, 0);
    /* Cropped, but most of a 400x300 figure is drawn. */
    uint32_t w = 0, h = 0;
    h_png_size(r, i, &w, &h);
    assert_in_range(w, 300, 440);
    assert_in_range(h, 220, 330);
    size_t len = 0;
    const unsigned char *d = ci_result_output_data(r, i, &len);
    assert_memory_equal(d, "\x89PNG\r\n\x1a\n", 8);
    assert_int_equal(d[len], 0);
    /* The last output of the run is in its only message. */
    assert_int_equal(ci_result_output_message(r, ci_result_output_count(r) - 1), 0);
    assert_int_equal(ci_result_outputs_omitted(r), 0);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_default_figure_is_640_by_480(void **state)
{
    char *cell = h_cells("display_size", "display_default_figure");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_int_equal(h_count_mime(r, "image/png"), 1);
    assert_png(r, 0, 0);
    h_assert_output(r, 1, "text/plain", "<Figure size 640x480 with 1 Axes>",
                    CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
}

static void test_empty_figure_gives_text_only(void **state)
{
    /* As IPython: a figure with nothing drawn is not rendered. */
    ci_result *r = h_run_status(S, "import matplotlib.pyplot as plt\nplt.figure();",
                                CI_STATUS_OK);
    assert_output_count(r, 1);
    h_assert_output(r, 0, "text/plain", "<Figure size 640x480 with 0 Axes>",
                    CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
}

static void test_figure_keeps_its_own_dpi(void **state)
{
    char *cell = h_cells("display_size", "display_figure_own_dpi");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_png(r, 0, 0);
    h_assert_output(r, 1, "text/plain", "<Figure size 320x240 with 1 Axes>",
                    CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
}

static void test_figure_dpi_setting_scales_the_png(void **state)
{
    ci_session *s = display_session(0, 0, 50);
    char *cell = h_cells("display_size", "display_two_figures_at_the_dpi_setting");
    ci_result *r = h_run_status(s, cell, CI_STATUS_OK);
    free(cell);
    assert_int_equal(h_count_mime(r, "image/png"), 2);
    assert_png(r, 0, 0);
    size_t second = assert_png(r, 1, 1);
    /* The configured dpi is the figures' own: a default figure at 50 dpi. */
    h_assert_output(r, second + 1, "text/plain", "<Figure size 320x240 with 1 Axes>",
                    CI_OUTPUT_DISPLAY_DATA, 1);
    uint32_t w = 0, h = 0;
    h_png_size(r, second, &w, &h);
    assert_in_range(w, 240, 340);
    ci_result_free(r);
    ci_session_free(s);
}

static void test_three_figures_give_three_messages_and_are_closed(void **state)
{
    char *cell = h_cells("display_size", "display_three_figures");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_int_equal(h_count_mime(r, "image/png"), 3);
    assert_png(r, 0, 0);
    assert_png(r, 1, 1);
    assert_png(r, 2, 2);
    ci_result_free(r);

    r = h_run_status(S, "import matplotlib.pyplot as plt; len(plt.get_fignums())",
                     CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "0");
    assert_output_count(r, 0);
    ci_result_free(r);
}

static void test_figures_come_in_figure_number_order(void **state)
{
    char *cell = h_cells("display_size", "display_figure_number_order");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_int_equal(h_count_mime(r, "image/png"), 3);
    assert_png(r, 0, 0);
    assert_png(r, 1, 1);
    assert_png(r, 2, 2);
    ci_result_free(r);
}

static void test_plt_show_mid_cell_emits_and_closes_the_figure(void **state)
{
    char *cell = h_cells("display_size", "display_plt_show_mid_cell");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    h_assert_contains(ci_result_stdout(r, NULL), "\n0\nsize ");
    assert_int_equal(h_count_mime(r, "image/png"), 2);
    size_t first = assert_png(r, 0, 0);
    size_t second = assert_png(r, 1, 1);
    assert_true(first < second);
    ci_result_free(r);
}

static void test_figure_of_a_failing_cell_still_comes_back(void **state)
{
    char *cell = h_cells("display_size", "display_figure_of_failing_cell");
    ci_result *r = h_run_status(S, cell, CI_STATUS_ERROR);
    free(cell);
    h_assert_str(ci_result_error_name(r), "ZeroDivisionError");
    assert_int_equal(h_count_mime(r, "image/png"), 1);
    assert_png(r, 0, 0);
    ci_result_free(r);
    h_expect(S, "import matplotlib.pyplot as plt; len(plt.get_fignums())", "0", "");
}

static void test_displayed_figure_is_returned_once(void **state)
{
    char *cell = h_cells("display_size", "display_figure_displayed_once");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_int_equal(h_count_mime(r, "image/png"), 1);
    assert_png(r, 0, 0);
    /* One message only. */
    assert_int_equal(ci_result_output_message(r, ci_result_output_count(r) - 1), 0);
    ci_result_free(r);
    h_expect(S, "import matplotlib.pyplot as plt; len(plt.get_fignums())", "0", "");
}

/* ----------------------------------------------------------- display() */

static void test_display_calls_keep_their_order(void **state)
{
    ci_result *r = h_run_status(S, "display('a'); display(2); display({'k': 1})", CI_STATUS_OK);
    assert_null(ci_result_value(r));
    assert_output_count(r, 3);
    h_assert_output(r, 0, "text/plain", "'a'", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 1, "text/plain", "2", CI_OUTPUT_DISPLAY_DATA, 1);
    h_assert_output(r, 2, "text/plain", "{'k': 1}", CI_OUTPUT_DISPLAY_DATA, 2);
    assert_int_equal(ci_result_outputs_omitted(r), 0);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

static void test_display_of_several_objects_gives_a_message_each(void **state)
{
    ci_result *r = h_run_status(S, "display('x', 3)", CI_STATUS_OK);
    assert_output_count(r, 2);
    h_assert_output(r, 0, "text/plain", "'x'", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 1, "text/plain", "3", CI_OUTPUT_DISPLAY_DATA, 1);
    ci_result_free(r);
}

static void test_display_is_interleaved_with_prints_in_its_own_list(void **state)
{
    ci_result *r = h_run_status(S, "print('p1')\ndisplay('d1')\nprint('p2')\n'v'",
                                CI_STATUS_OK);
    size_t len = 0;
    const char *o = ci_result_stdout(r, &len);
    assert_int_equal(len, 6);
    assert_memory_equal(o, "p1\np2\n", 6);
    h_assert_str(ci_result_value(r), "'v'");
    /* A str has no representation besides text: no execute_result. */
    assert_output_count(r, 1);
    h_assert_output(r, 0, "text/plain", "'d1'", CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
}

static void test_outputs_do_not_carry_over_to_the_next_cell(void **state)
{
    ci_result *r = h_run_status(S, "display(1)", CI_STATUS_OK);
    assert_output_count(r, 1);
    ci_result_free(r);
    r = h_run_status(S, "2", CI_STATUS_OK);
    assert_output_count(r, 0);
    ci_result_free(r);
}

static void test_plain_value_gives_no_outputs(void **state)
{
    ci_result *r = h_run_status(S, "1+1", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "2");
    assert_output_count(r, 0);
    assert_int_equal(ci_result_outputs_omitted(r), 0);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
}

/* ------------------------------------------------- execute_result, repr */

static void test_dataframe_value_gives_html_execute_result(void **state)
{
    ci_result *r = h_run_status(S, "import pandas as pd\npd.DataFrame({'a': [1, 2], 'b': [3, 4]})",
                                CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "   a  b\n0  1  3\n1  2  4");
    /* text/plain is the value, not an output; _repr_latex_ gives None. */
    assert_output_count(r, 1);
    h_assert_output(r, 0, "text/html", NULL, CI_OUTPUT_EXECUTE_RESULT, 0);
    size_t len = 0;
    const char *html = ci_result_output_data(r, 0, &len);
    h_assert_contains(html, "<table");
    assert_int_equal(strlen(html), len);
    assert_true(h_utf8_valid(html, len));
    ci_result_free(r);
}

static void test_dataframe_after_semicolon_gives_nothing(void **state)
{
    ci_result *r = h_run_status(S, "import pandas as pd\npd.DataFrame({'a': [1, 2]});",
                                CI_STATUS_OK);
    assert_null(ci_result_value(r));
    assert_output_count(r, 0);
    ci_result_free(r);
}

static void test_display_then_execute_result_are_numbered_in_order(void **state)
{
    ci_result *r = h_run_status(S, "import pandas as pd\ndisplay(1)\npd.DataFrame({'a': [7]})",
                                CI_STATUS_OK);
    assert_output_count(r, 2);
    h_assert_output(r, 0, "text/plain", "1", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 1, "text/html", NULL, CI_OUTPUT_EXECUTE_RESULT, 1);
    h_assert_contains(ci_result_output_data(r, 1, NULL), "<table");
    ci_result_free(r);
}

static void test_html_and_markdown_reprs_come_before_plain_text(void **state)
{
    /* Defined markdown first: the order is by richness, not definition. */
    char *cell = h_cell("display_html_and_markdown_reprs");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_output_count(r, 3);
    h_assert_output(r, 0, "text/html", "<b>H</b>", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 1, "text/markdown", "**M**", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 2, "text/plain", "Rich()", CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
}

static void test_all_text_reprs_come_richest_first(void **state)
{
    char *cell = h_cell("display_all_text_reprs");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_output_count(r, 6);
    h_assert_output(r, 0, "image/svg+xml", "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
                    CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 1, "text/html", "<i>h</i>", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 2, "text/markdown", "*m*", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 3, "text/latex", "$x$", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 4, "application/json", NULL, CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_contains(ci_result_output_data(r, 4, NULL), "\"j\"");
    h_assert_output(r, 5, "text/plain", "Many()", CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
}

static void test_rich_last_expression_is_an_execute_result_without_plain_text(void **state)
{
    char *cell = h_cell("display_rich_last_expression");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    h_assert_str(ci_result_value(r), "H()");
    assert_output_count(r, 1);
    h_assert_output(r, 0, "text/html", "<p>h</p>", CI_OUTPUT_EXECUTE_RESULT, 0);
    ci_result_free(r);
}

static void test_repr_mimebundle_dict_is_used(void **state)
{
    char *cell = h_cell("display_repr_mimebundle");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    assert_output_count(r, 3);
    h_assert_output(r, 0, "text/html", "<b>mb</b>", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 1, "text/markdown", "**mb**", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 2, "text/plain", "MB()", CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
}

static void test_pil_image_repr_png(void **state)
{
    ci_result *r = h_run_status(S, "from PIL import Image\nImage.new('RGB', (7, 5))",
                                CI_STATUS_OK);
    h_assert_contains(ci_result_value(r), "size=7x5");
    assert_output_count(r, 1);
    uint32_t w = 0, h = 0;
    h_png_size(r, 0, &w, &h);
    assert_int_equal(w, 7);
    assert_int_equal(h, 5);
    assert_int_equal(ci_result_output_type(r, 0), CI_OUTPUT_EXECUTE_RESULT);
    assert_int_equal(ci_result_output_message(r, 0), 0);
    ci_result_free(r);
}

static void test_raising_repr_is_skipped_with_traceback_on_stderr(void **state)
{
    char *cell = h_cell("display_raising_repr");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    h_assert_str(ci_result_value(r), "'after'");
    assert_output_count(r, 1);
    h_assert_output(r, 0, "text/plain", "Bad()", CI_OUTPUT_DISPLAY_DATA, 0);
    const char *err = ci_result_stderr(r, NULL);
    h_assert_contains(err, "ValueError");
    h_assert_contains(err, "html-boom");
    ci_result_free(r);
}

static void test_repr_returning_none_gives_no_output(void **state)
{
    char *cell = h_cell("display_repr_returning_none");
    ci_result *r = h_run_status(S, cell, CI_STATUS_OK);
    free(cell);
    h_assert_str(ci_result_value(r), "N()");
    assert_output_count(r, 1);
    h_assert_output(r, 0, "text/plain", "N()", CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
}

static void test_non_ascii_text_output_is_utf8(void **state)
{
    ci_result *r = h_run_status(S, "display('\xc3\xa9\xe2\x9c\x93')", CI_STATUS_OK);
    assert_output_count(r, 1);
    h_assert_output(r, 0, "text/plain", "'\xc3\xa9\xe2\x9c\x93'", CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_free(r);
}

/* ------------------------------------------------------- display limits */

static void test_output_over_per_output_limit_is_omitted(void **state)
{
    ci_session *s = display_session(1024, 4096, 0);
    /* H(n), a class whose HTML is n bytes and whose repr is "H". */
    char *cell = h_cell_then("display_html_class", "display(H(500))");
    ci_result *r = h_run_status(s, cell, CI_STATUS_OK);
    free(cell);
    assert_output_count(r, 2);
    size_t len = 0;
    h_assert_output(r, 0, "text/html", NULL, CI_OUTPUT_DISPLAY_DATA, 0);
    ci_result_output_data(r, 0, &len);
    assert_int_equal(len, 500);
    h_assert_output(r, 1, "text/plain", "H", CI_OUTPUT_DISPLAY_DATA, 0);
    assert_int_equal(ci_result_outputs_omitted(r), 0);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);

    /* Exactly at the limit is kept. */
    r = h_run_status(s, "display(H(1024))", CI_STATUS_OK);
    assert_output_count(r, 2);
    ci_result_output_data(r, 0, &len);
    assert_int_equal(len, 1024);
    assert_int_equal(ci_result_outputs_omitted(r), 0);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);

    r = h_run_status(s, "display(H(2000))\n'still runs'", CI_STATUS_OK);
    h_assert_str(ci_result_value(r), "'still runs'");
    assert_output_count(r, 1);
    h_assert_output(r, 0, "text/plain", "H", CI_OUTPUT_DISPLAY_DATA, 0);
    assert_int_equal(ci_result_outputs_omitted(r), 1);
    assert_int_equal(ci_result_truncated(r), CI_TRUNCATED_OUTPUTS);
    ci_result_free(r);

    /* One byte over. */
    r = h_run_status(s, "display(H(1025))", CI_STATUS_OK);
    assert_int_equal(h_count_mime(r, "text/html"), 0);
    assert_int_equal(ci_result_outputs_omitted(r), 1);
    assert_true(ci_result_truncated(r) & CI_TRUNCATED_OUTPUTS);
    ci_result_free(r);

    /* The next run starts with nothing omitted. */
    r = h_run_status(s, "display(H(100))", CI_STATUS_OK);
    assert_int_equal(h_count_mime(r, "text/html"), 1);
    assert_int_equal(ci_result_outputs_omitted(r), 0);
    assert_int_equal(ci_result_truncated(r), 0);
    ci_result_free(r);
    ci_session_free(s);
}

static void test_outputs_over_per_run_limit_are_omitted(void **state)
{
    ci_session *s = display_session(1024, 4096, 0);
    char *cell = h_cell_then("display_html_class", "for _ in range(6):\n    display(H(900))\n");
    ci_result *r = h_run_status(s, cell, CI_STATUS_OK);
    free(cell);
    size_t total = 0, n = ci_result_output_count(r);
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        ci_result_output_data(r, i, &len);
        total += len;
    }
    /* Four HTML outputs (3600 bytes) fit in 4096, a fifth does not. */
    assert_true(total <= 4096);
    assert_int_equal(h_count_mime(r, "text/html"), 4);
    assert_true(ci_result_outputs_omitted(r) >= 2);
    assert_true(ci_result_truncated(r) & CI_TRUNCATED_OUTPUTS);
    /* What was kept is still in order and numbered by its message. */
    for (size_t k = 0; k < 4; k++) {
        size_t i = h_find_mime(r, "text/html", k);
        assert_int_equal(ci_result_output_message(r, i), k);
    }
    ci_result_free(r);
    ci_session_free(s);
}

static void test_wholly_omitted_message_is_not_numbered(void **state)
{
    ci_session *s = display_session(1024, 4096, 0);
    /* The repr of a 2000-character string is over the per-output limit:
     * its message loses its only output and the next one takes its number. */
    ci_result *r = h_run_status(s, "display('a'); display('x' * 2000); display('b')",
                                CI_STATUS_OK);
    assert_output_count(r, 2);
    h_assert_output(r, 0, "text/plain", "'a'", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, 1, "text/plain", "'b'", CI_OUTPUT_DISPLAY_DATA, 1);
    assert_int_equal(ci_result_outputs_omitted(r), 1);
    assert_int_equal(ci_result_truncated(r), CI_TRUNCATED_OUTPUTS);
    ci_result_free(r);

    r = h_run_status(s, "display('x' * 2000); display('c')", CI_STATUS_OK);
    assert_output_count(r, 1);
    h_assert_output(r, 0, "text/plain", "'c'", CI_OUTPUT_DISPLAY_DATA, 0);
    assert_int_equal(ci_result_outputs_omitted(r), 1);
    ci_result_free(r);

    /* A figure whose PNG is over the limit is left out, and closed all the same. */
    r = h_run_status(s,
                     "import matplotlib.pyplot as plt\n"
                     "plt.figure(figsize=(6, 6))\nplt.plot(range(100), [i * i for i in range(100)]);",
                     CI_STATUS_OK);
    assert_int_equal(h_count_mime(r, "image/png"), 0);
    assert_true(ci_result_outputs_omitted(r) >= 1);
    assert_true(ci_result_truncated(r) & CI_TRUNCATED_OUTPUTS);
    ci_result_free(r);
    h_expect(s, "import matplotlib.pyplot as plt; len(plt.get_fignums())", "0", "");
    ci_session_free(s);
}

static void test_outputs_past_max_outputs_are_omitted(void **state)
{
    ci_result *r = h_run_status(S, "for i in range(10001):\n    display(i)\n", CI_STATUS_OK);
    assert_int_equal(ci_result_output_count(r), CI_MAX_OUTPUTS);
    assert_int_equal(ci_result_outputs_omitted(r), 1);
    assert_true(ci_result_truncated(r) & CI_TRUNCATED_OUTPUTS);
    h_assert_output(r, 0, "text/plain", "0", CI_OUTPUT_DISPLAY_DATA, 0);
    h_assert_output(r, CI_MAX_OUTPUTS - 1, "text/plain", "9999", CI_OUTPUT_DISPLAY_DATA,
                    CI_MAX_OUTPUTS - 1);
    ci_result_free(r);
}

/* ------------------------------------------------------ config, getters */

static void test_display_limits_are_validated(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_non_null(cfg);
    assert_int_equal(ci_config_set_display_limits(NULL, 1024, 4096), CI_EINVAL);
    assert_int_equal(ci_config_set_display_limits(cfg, 1023, 4096), CI_EINVAL);
    assert_int_equal(ci_config_set_display_limits(cfg, 0, 4096), CI_EINVAL);
    assert_int_equal(ci_config_set_display_limits(cfg, 4096, 4095), CI_EINVAL);
    assert_int_equal(ci_config_set_display_limits(cfg, 1024, (size_t)1 << 30 | 1), CI_EINVAL);
    assert_int_equal(ci_config_set_display_limits(cfg, (size_t)1 << 30 | 1, (size_t)1 << 30 | 1),
                     CI_EINVAL);
    assert_int_equal(ci_config_set_display_limits(cfg, 1024, 1024), CI_OK);
    assert_int_equal(ci_config_set_display_limits(cfg, (size_t)1 << 30, (size_t)1 << 30), CI_OK);
    assert_int_equal(ci_config_set_display_limits(cfg, 16 << 20, 64 << 20), CI_OK);
    ci_config_free(cfg);
}

static void test_figure_dpi_is_validated(void **state)
{
    ci_config *cfg = ci_config_new();
    assert_non_null(cfg);
    assert_int_equal(ci_config_set_figure_dpi(NULL, 100), CI_EINVAL);
    assert_int_equal(ci_config_set_figure_dpi(cfg, 0), CI_EINVAL);
    assert_int_equal(ci_config_set_figure_dpi(cfg, 9), CI_EINVAL);
    assert_int_equal(ci_config_set_figure_dpi(cfg, 601), CI_EINVAL);
    assert_int_equal(ci_config_set_figure_dpi(cfg, 10), CI_OK);
    assert_int_equal(ci_config_set_figure_dpi(cfg, 600), CI_OK);
    assert_int_equal(ci_config_set_figure_dpi(cfg, 100), CI_OK);
    ci_config_free(cfg);
}

static void test_getters_on_null_and_out_of_range(void **state)
{
    size_t len = 77;
    assert_int_equal(ci_result_output_count(NULL), 0);
    assert_null(ci_result_output_mime(NULL, 0));
    assert_null(ci_result_output_data(NULL, 0, &len));
    assert_int_equal(len, 0);
    assert_null(ci_result_output_data(NULL, 0, NULL));
    assert_int_equal(ci_result_output_type(NULL, 0), 0);
    assert_int_equal(ci_result_output_message(NULL, 0), 0);
    assert_int_equal(ci_result_outputs_omitted(NULL), 0);
    assert_int_equal(ci_result_truncated(NULL), 0);

    ci_result *r = h_run_status(S, "display('a', 'b')", CI_STATUS_OK);
    size_t n = ci_result_output_count(r);
    assert_int_equal(n, 2);
    /* In range: a valid output, with a message number of 1. */
    assert_non_null(ci_result_output_mime(r, n - 1));
    assert_int_equal(ci_result_output_message(r, n - 1), 1);
    len = 77;
    assert_null(ci_result_output_mime(r, n));
    assert_null(ci_result_output_data(r, n, &len));
    assert_int_equal(len, 0);
    assert_int_equal(ci_result_output_type(r, n), 0);
    assert_int_equal(ci_result_output_message(r, n), 0);
    len = 77;
    assert_null(ci_result_output_data(r, (size_t)-1, &len));
    assert_int_equal(len, 0);
    assert_null(ci_result_output_mime(r, (size_t)-1));
    ci_result_free(r);

    /* A cell with no outputs: index 0 is out of range. */
    r = h_run_status(S, "pass", CI_STATUS_OK);
    len = 77;
    assert_int_equal(ci_result_output_count(r), 0);
    assert_null(ci_result_output_mime(r, 0));
    assert_null(ci_result_output_data(r, 0, &len));
    assert_int_equal(len, 0);
    assert_int_equal(ci_result_output_type(r, 0), 0);
    ci_result_free(r);
}

static void test_killed_worker_has_no_outputs(void **state)
{
    ci_result *r = h_run_status(S, "display('before')\nimport os\nos._exit(3)", CI_STATUS_KILLED);
    assert_int_equal(ci_result_output_count(r), 0);
    assert_null(ci_result_output_mime(r, 0));
    ci_result_free(r);
}

int main(void)
{
    h_watchdog(110);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_figure_is_a_tight_png_at_the_figures_dpi, h_setup_alive),
        cmocka_unit_test_setup(test_default_figure_is_640_by_480, h_setup_alive),
        cmocka_unit_test_setup(test_empty_figure_gives_text_only, h_setup_alive),
        cmocka_unit_test_setup(test_figure_keeps_its_own_dpi, h_setup_alive),
        cmocka_unit_test(test_figure_dpi_setting_scales_the_png),
        cmocka_unit_test_setup(test_three_figures_give_three_messages_and_are_closed,
                               h_setup_alive),
        cmocka_unit_test_setup(test_figures_come_in_figure_number_order, h_setup_alive),
        cmocka_unit_test_setup(test_plt_show_mid_cell_emits_and_closes_the_figure, h_setup_alive),
        cmocka_unit_test_setup(test_figure_of_a_failing_cell_still_comes_back, h_setup_alive),
        cmocka_unit_test_setup(test_displayed_figure_is_returned_once, h_setup_alive),
        cmocka_unit_test_setup(test_display_calls_keep_their_order, h_setup_alive),
        cmocka_unit_test_setup(test_display_of_several_objects_gives_a_message_each,
                               h_setup_alive),
        cmocka_unit_test_setup(test_display_is_interleaved_with_prints_in_its_own_list,
                               h_setup_alive),
        cmocka_unit_test_setup(test_outputs_do_not_carry_over_to_the_next_cell, h_setup_alive),
        cmocka_unit_test_setup(test_plain_value_gives_no_outputs, h_setup_alive),
        cmocka_unit_test_setup(test_dataframe_value_gives_html_execute_result, h_setup_alive),
        cmocka_unit_test_setup(test_dataframe_after_semicolon_gives_nothing, h_setup_alive),
        cmocka_unit_test_setup(test_display_then_execute_result_are_numbered_in_order,
                               h_setup_alive),
        cmocka_unit_test_setup(test_html_and_markdown_reprs_come_before_plain_text,
                               h_setup_alive),
        cmocka_unit_test_setup(test_all_text_reprs_come_richest_first, h_setup_alive),
        cmocka_unit_test_setup(test_rich_last_expression_is_an_execute_result_without_plain_text,
                               h_setup_alive),
        cmocka_unit_test_setup(test_repr_mimebundle_dict_is_used, h_setup_alive),
        cmocka_unit_test_setup(test_pil_image_repr_png, h_setup_alive),
        cmocka_unit_test_setup(test_raising_repr_is_skipped_with_traceback_on_stderr,
                               h_setup_alive),
        cmocka_unit_test_setup(test_repr_returning_none_gives_no_output, h_setup_alive),
        cmocka_unit_test_setup(test_non_ascii_text_output_is_utf8, h_setup_alive),
        cmocka_unit_test(test_output_over_per_output_limit_is_omitted),
        cmocka_unit_test(test_outputs_over_per_run_limit_are_omitted),
        cmocka_unit_test(test_wholly_omitted_message_is_not_numbered),
        cmocka_unit_test_setup(test_outputs_past_max_outputs_are_omitted, h_setup_alive),
        cmocka_unit_test(test_display_limits_are_validated),
        cmocka_unit_test(test_figure_dpi_is_validated),
        cmocka_unit_test_setup(test_getters_on_null_and_out_of_range, h_setup_alive),
        cmocka_unit_test_setup(test_killed_worker_has_no_outputs, h_setup_alive),
    };
    return cmocka_run_group_tests_name("display", tests, group_setup, h_group_teardown);
}
