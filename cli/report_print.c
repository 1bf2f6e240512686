/* tally report's table and HTML page, drawn from the report's JSON
 * (report_figures.c), so that the three outputs never disagree. The page
 * is one self-contained file: inline CSS and SVG, no script, nothing
 * fetched. */
#include "cli/report_print.h"
#include "cli/cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* A figure with 4 decimals, or "-" when there is none. */
static const char *fig(double v, char buf[32]) {
  if (isnan(v))
    return "-";
  snprintf(buf, 32, "%.4f", v);
  return buf;
}

static cJSON *parse(const char *json, size_t len) {
  cJSON *root = cJSON_ParseWithLength(json, len);
  if (root == NULL)
    fprintf(stderr, "tally: out of memory\n");
  return root;
}

int report_print_table(const char *json, size_t len, bool by_category) {
  cJSON *root = parse(json, len);
  if (root == NULL)
    return EXIT_JOB_FAILED;
  char a[32], b[32], c[32];
  const cJSON *contest = get(root, "contest");
  printf("report%s%s: %.0f samples, %.0f problems, %.0f unscored\n",
         cJSON_IsString(contest) ? " of contest " : "",
         cJSON_IsString(contest) ? contest->valuestring : "",
         num(root, "samples"), num(root, "problems"), num(root, "unscored"));
  printf("intervals: %.4g confidence, bootstrap over problems (%.0f "
         "resamples, seed %.0f)\n\n",
         num(root, "confidence"), num(root, "bootstrap"), num(root, "seed"));
  printf("%-20s %8s %8s %9s %11s  %-17s", "participant", "samples", "problems",
         "accuracy", "mean reward", "interval");
  const cJSON *ks = get(root, "k"), *k;
  cJSON_ArrayForEach(k, ks) {
    char h[24];
    snprintf(h, sizeof(h), "pass@%.0f", k->valuedouble);
    printf(" %8s", h);
  }
  putchar('\n');
  const cJSON *ps = get(root, "participants"), *p;
  cJSON_ArrayForEach(p, ps) {
    const cJSON *iv = get(get(p, "problem_mean_reward"), "bootstrap");
    char range[80];
    snprintf(range, sizeof(range), "[%s, %s]", fig(num(iv, "lower"), a),
             fig(num(iv, "upper"), b));
    printf("%-20s %8.0f %8.0f %9s %11s  %-17s", str(p, "participant"),
           num(p, "samples"), num(p, "problems"), fig(num(p, "accuracy"), c),
           fig(num(p, "mean_reward"), a), range);
    const cJSON *pk;
    cJSON_ArrayForEach(pk, get(p, "pass_at_k"))
        printf(" %8s", fig(num(pk, "value"), b));
    putchar('\n');
  }
  cJSON_ArrayForEach(p, ps) {
    const cJSON *jd = get(p, "judge");
    if (jd != NULL)
      printf("judge: %s: %.0f judged, %.0f unparseable, %.0f unjudged\n",
             str(p, "participant"), num(jd, "judged"), num(jd, "unparseable"),
             num(jd, "unjudged"));
  }
  cJSON_ArrayForEach(p, ps) {
    const cJSON *pk;
    cJSON_ArrayForEach(pk, get(p, "pass_at_k")) {
      if (num(pk, "left_out") > 0)
        printf("%s: pass@%.0f leaves out %.0f problems with fewer than %.0f "
               "samples\n",
               str(p, "participant"), num(pk, "k"), num(pk, "left_out"),
               num(pk, "k"));
    }
  }
  if (by_category) {
    printf("\n%-20s %-20s %8s %8s %11s  %s\n", "participant", "category",
           "samples", "problems", "mean reward", "interval");
    cJSON_ArrayForEach(p, ps) {
      const cJSON *cat;
      cJSON_ArrayForEach(cat, get(p, "categories")) {
        const cJSON *iv = get(get(cat, "problem_mean_reward"), "bootstrap");
        printf("%-20s %-20s %8.0f %8.0f %11s  [%s, %s]\n",
               str(p, "participant"), str(cat, "category"), num(cat, "samples"),
               num(cat, "problems"), fig(num(cat, "mean_reward"), a),
               fig(num(iv, "lower"), b), fig(num(iv, "upper"), c));
      }
    }
  }
  const cJSON *fa = get(root, "failure_analysis");
  printf("\nfailures: %.0f (rate %s)\n", num(fa, "total_failures"),
         fig(num(fa, "failure_rate"), a));
  const cJSON *cat;
  cJSON_ArrayForEach(cat, get(fa, "categories"))
      printf("  %-24s %8.0f  rate %s\n", cat->string, num(cat, "count"),
             fig(num(cat, "rate"), a));
  cJSON_Delete(root);
  return 0;
}

/* HTML */

static const char *const colors[] = {"#3367d6", "#e8710a", "#1e8e3e",
                                     "#d93025", "#9334e6", "#12a4af",
                                     "#f538a0", "#7f8c8d"};
#define NCOLORS (sizeof(colors) / sizeof(colors[0]))

/* Writes s with &, <, >, " and ' escaped. */
static void esc(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&':
      fputs("&amp;", f);
      break;
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    case '\'':
      fputs("&#39;", f);
      break;
    default:
      fputc(*s, f);
    }
  }
}

static void legend(FILE *f, const cJSON *ps) {
  fputs("<p class=\"legend\">", f);
  size_t i = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, ps) {
    fprintf(f, "<span><i style=\"background:%s\"></i>", colors[i++ % NCOLORS]);
    esc(f, str(p, "participant"));
    fputs("</span> ", f);
  }
  fputs("</p>\n", f);
}

/* The y axis of a chart of values in [0, 1]: lines at 0, 0.25 .. 1. */
static void y_axis(FILE *f, double x0, double x1, double y0, double h) {
  for (int t = 0; t <= 4; t++) {
    double y = y0 + h - h * t / 4.0;
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "class=\"grid\"/><text x=\"%.1f\" y=\"%.1f\" "
            "class=\"tick\" text-anchor=\"end\">%.2f</text>\n",
            x0, y, x1, y, x0 - 6, y + 4, t / 4.0);
  }
}

/* Per-category mean reward, a bar per participant, with the bootstrap
 * interval as a whisker. */
static void chart_categories(FILE *f, const cJSON *ps) {
  /* The categories, in the order of the first participant that has
   * each, then any others. */
  const char *cats[256];
  size_t ncat = 0;
  const cJSON *p, *c;
  cJSON_ArrayForEach(p, ps) cJSON_ArrayForEach(c, get(p, "categories")) {
    const char *name = str(c, "category");
    size_t i = 0;
    while (i < ncat && strcmp(cats[i], name) != 0)
      i++;
    if (i == ncat && ncat < 256)
      cats[ncat++] = name;
  }
  size_t np = (size_t)cJSON_GetArraySize(ps);
  double left = 50, top = 20, h = 220, group = 30.0 + 18.0 * (double)np;
  double width = left + group * (double)(ncat ? ncat : 1) + 20;
  fprintf(f,
          "<svg id=\"chart-categories\" class=\"chart\" "
          "xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
          "height=\"%.0f\" role=\"img\" aria-label=\"mean reward per "
          "category\">\n",
          width, top + h + 60);
  y_axis(f, left, width - 10, top, h);
  for (size_t ci = 0; ci < ncat; ci++) {
    double gx = left + group * (double)ci + 15;
    size_t pi = 0;
    cJSON_ArrayForEach(p, ps) {
      cJSON_ArrayForEach(c, get(p, "categories")) {
        if (strcmp(str(c, "category"), cats[ci]) != 0)
          continue;
        double m = num(c, "mean_reward");
        const cJSON *iv = get(get(c, "problem_mean_reward"), "bootstrap");
        double lo = num(iv, "lower"), hi = num(iv, "upper");
        double x = gx + 18.0 * (double)pi;
        fprintf(f,
                "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"14\" "
                "height=\"%.1f\" fill=\"%s\"><title>",
                x, top + h - h * m, h * m, colors[pi % NCOLORS]);
        esc(f, str(p, "participant"));
        fputs(" / ", f);
        esc(f, cats[ci]);
        fprintf(f, ": %.4f [%.4f, %.4f]</title></rect>\n", m, lo, hi);
        if (!isnan(lo) && !isnan(hi))
          fprintf(f,
                  "<path class=\"whisker\" d=\"M%.1f %.1fV%.1fM%.1f "
                  "%.1fh8M%.1f %.1fh8\"/>\n",
                  x + 7, top + h - h * lo, top + h - h * hi, x + 3,
                  top + h - h * lo, x + 3, top + h - h * hi);
      }
      pi++;
    }
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" class=\"label\" "
            "text-anchor=\"middle\">",
            gx + 9.0 * (double)np, top + h + 18);
    esc(f, cats[ci]);
    fputs("</text>\n", f);
  }
  fputs("</svg>\n", f);
}

/* pass@k against k, a line per participant. */
static void chart_pass_at_k(FILE *f, const cJSON *root, const cJSON *ps) {
  const cJSON *ks = get(root, "k");
  int nk = cJSON_GetArraySize(ks);
  double left = 50, top = 20, h = 220, w = 80.0 * (nk > 1 ? nk - 1 : 1);
  fprintf(f,
          "<svg id=\"chart-pass-at-k\" class=\"chart\" "
          "xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
          "height=\"%.0f\" role=\"img\" aria-label=\"pass@k\">\n",
          left + w + 40, top + h + 50);
  y_axis(f, left, left + w + 20, top, h);
  int i = 0;
  const cJSON *k;
  cJSON_ArrayForEach(k, ks) {
    double x = left + 10 + (nk > 1 ? w * i / (nk - 1) : w / 2);
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" class=\"label\" "
            "text-anchor=\"middle\">k=%.0f</text>\n",
            x, top + h + 18, k->valuedouble);
    i++;
  }
  size_t pi = 0;
  const cJSON *p;
  cJSON_ArrayForEach(p, ps) {
    fprintf(f, "<polyline class=\"curve\" stroke=\"%s\" points=\"",
            colors[pi % NCOLORS]);
    i = 0;
    const cJSON *pk;
    cJSON_ArrayForEach(pk, get(p, "pass_at_k")) {
      double v = num(pk, "value");
      double x = left + 10 + (nk > 1 ? w * i / (nk - 1) : w / 2);
      if (!isnan(v))
        fprintf(f, "%.1f,%.1f ", x, top + h - h * v);
      i++;
    }
    fputs("\"/>\n", f);
    i = 0;
    cJSON_ArrayForEach(pk, get(p, "pass_at_k")) {
      double v = num(pk, "value");
      double x = left + 10 + (nk > 1 ? w * i / (nk - 1) : w / 2);
      if (!isnan(v)) {
        fprintf(f,
                "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
                "fill=\"%s\"><title>",
                x, top + h - h * v, colors[pi % NCOLORS]);
        esc(f, str(p, "participant"));
        fprintf(f, ": pass@%.0f %.4f</title></circle>\n", num(pk, "k"), v);
      }
      i++;
    }
    pi++;
  }
  fputs("</svg>\n", f);
}

/* The failure categories over every sample, as horizontal bars. */
static void chart_failures(FILE *f, const cJSON *fa) {
  const cJSON *cats = get(fa, "categories"), *c;
  int n = cJSON_GetArraySize(cats);
  double max = 0;
  cJSON_ArrayForEach(c, cats) max = fmax(max, num(c, "count"));
  double left = 190, top = 10, row = 26, w = 360;
  fprintf(f,
          "<svg id=\"chart-failures\" class=\"chart\" "
          "xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
          "height=\"%.0f\" role=\"img\" aria-label=\"failures\">\n",
          left + w + 120, top + row * (n > 0 ? n : 1) + 10);
  int i = 0;
  cJSON_ArrayForEach(c, cats) {
    double count = num(c, "count"), y = top + row * i;
    double bw = max > 0 ? w * count / max : 0;
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" class=\"label\" "
            "text-anchor=\"end\">",
            left - 8, y + 15);
    esc(f, c->string);
    fprintf(f,
            "</text><rect class=\"fail\" x=\"%.1f\" y=\"%.1f\" "
            "width=\"%.1f\" height=\"18\"/><text x=\"%.1f\" y=\"%.1f\" "
            "class=\"tick\">%.0f (%.2f%%)</text>\n",
            left, y + 2, bw, left + bw + 6, y + 15, count,
            100 * num(c, "rate"));
    i++;
  }
  if (n == 0)
    fprintf(f, "<text x=\"%.1f\" y=\"24\" class=\"label\">no failures</text>\n",
            left);
  fputs("</svg>\n", f);
}

int report_print_html(const char *json, size_t len, const char *path) {
  cJSON *root = parse(json, len);
  if (root == NULL)
    return EXIT_JOB_FAILED;
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "tally: --html %s: %s\n", path, strerror(errno));
    cJSON_Delete(root);
    return EXIT_CONFIG;
  }
  const cJSON *ps = get(root, "participants");
  const cJSON *contest = get(root, "contest");
  char a[32], b[32], c[32], d[32];
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<title>tally report",
        f);
  if (cJSON_IsString(contest)) {
    fputs(": ", f);
    esc(f, contest->valuestring);
  }
  fputs("</title>\n<style>\n"
        "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#202124}\n"
        "table{border-collapse:collapse;margin:8px 0 20px}\n"
        "td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:"
        "right}\n"
        "td:first-child,th:first-child{text-align:left}\n"
        ".chart{display:block;margin:8px 0 24px}\n"
        ".grid{stroke:#e0e0e0}.tick{font-size:11px;fill:#5f6368}\n"
        ".label{font-size:12px;fill:#202124}\n"
        ".whisker{stroke:#202124;stroke-width:1.5;fill:none}\n"
        ".curve{fill:none;stroke-width:2}.fail{fill:#d93025}\n"
        ".legend span{margin-right:14px}.legend i{display:inline-block;"
        "width:10px;height:10px;margin-right:5px}\n"
        "pre{white-space:pre-wrap;margin:0}\n"
        "#exemplars td,#exemplars th{text-align:left}\n"
        "</style></head><body>\n<h1>Benchmark report",
        f);
  if (cJSON_IsString(contest)) {
    fputs(": ", f);
    esc(f, contest->valuestring);
  }
  fprintf(f,
          "</h1>\n<p>%.0f samples over %.0f problems (%.0f unscored). "
          "Intervals: %.4g confidence, percentile bootstrap over problems "
          "(%.0f resamples, seed %.0f).</p>\n",
          num(root, "samples"), num(root, "problems"), num(root, "unscored"),
          num(root, "confidence"), num(root, "bootstrap"), num(root, "seed"));
  fputs("<table id=\"summary\"><tr><th>participant</th><th>samples</th>"
        "<th>problems</th><th>accuracy</th><th>mean reward</th>"
        "<th>interval</th>",
        f);
  const cJSON *k;
  cJSON_ArrayForEach(k, get(root, "k"))
      fprintf(f, "<th>pass@%.0f</th>", k->valuedouble);
  fputs("</tr>\n", f);
  const cJSON *p;
  cJSON_ArrayForEach(p, ps) {
    const cJSON *iv = get(get(p, "problem_mean_reward"), "bootstrap");
    fputs("<tr><td>", f);
    esc(f, str(p, "participant"));
    fprintf(f,
            "</td><td>%.0f</td><td>%.0f</td><td>%s</td><td>%s</td>"
            "<td>[%s, %s]</td>",
            num(p, "samples"), num(p, "problems"), fig(num(p, "accuracy"), a),
            fig(num(p, "mean_reward"), b), fig(num(iv, "lower"), c),
            fig(num(iv, "upper"), d));
    const cJSON *pk;
    cJSON_ArrayForEach(pk, get(p, "pass_at_k"))
        fprintf(f, "<td>%s</td>", fig(num(pk, "value"), b));
    fputs("</tr>\n", f);
  }
  fputs("</table>\n<h2>Mean reward per category</h2>\n", f);
  legend(f, ps);
  chart_categories(f, ps);
  fputs("<h2>pass@k</h2>\n", f);
  legend(f, ps);
  chart_pass_at_k(f, root, ps);
  const cJSON *fa = get(root, "failure_analysis");
  fprintf(f, "<h2>Failures: %.0f (rate %s)</h2>\n", num(fa, "total_failures"),
          fig(num(fa, "failure_rate"), a));
  chart_failures(f, fa);
  fputs("<table id=\"exemplars\"><tr><th>category</th><th>task</th>"
        "<th>submission</th><th>response</th></tr>\n",
        f);
  const cJSON *e;
  cJSON_ArrayForEach(e, get(fa, "exemplars")) {
    fputs("<tr><td>", f);
    esc(f, str(e, "category"));
    fputs("</td><td>", f);
    esc(f, str(e, "task"));
    fputs("</td><td>", f);
    esc(f, str(e, "submission"));
    fputs("</td><td><pre>", f);
    esc(f, str(e, "response_preview"));
    fputs("</pre></td></tr>\n", f);
  }
  fputs("</table>\n</body></html>\n", f);
  int status = 0;
  if (ferror(f) | fclose(f)) {
    fprintf(stderr, "tally: --html %s: %s\n", path, strerror(errno));
    status = EXIT_JOB_FAILED;
  }
  cJSON_Delete(root);
  return status;
}
