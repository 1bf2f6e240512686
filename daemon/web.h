/* The scoreboard page's script and style sheet, served inline by tallyd
 * (daemon/web/, turned into C by cmake/web2c.cmake). */
#ifndef TALLY_WEB_H
#define TALLY_WEB_H

extern const char tally_web_board_js[];
extern const char tally_web_board_css[];

#endif
