// Package report runs the pipeline between input files and rendering:
// parse (streamed) → unbias → aggregate (with symbolization once per
// distinct frame) → ci, in that order, and returns the table model that
// render draws. The parsing is the format packages', the math unbias's and
// ci's; nothing here prints.
package report
