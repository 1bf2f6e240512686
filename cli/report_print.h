/* tally report's outputs besides JSON: a table for a terminal and a
 * self-contained HTML page with inline SVG charts, both drawn from the
 * report's JSON text (docs/benchmarks.md). */
#ifndef TALLY_CLI_REPORT_PRINT_H
#define TALLY_CLI_REPORT_PRINT_H

#include <stdbool.h>
#include <stddef.h>

/* Prints the table to stdout; with by_category, the categories too.
 * Returns 0 or an exit status (printed). */
int report_print_table(const char *json, size_t len, bool by_category);

/* Writes the page to path. Returns 0 or an exit status (printed). */
int report_print_html(const char *json, size_t len, const char *path);

#endif
