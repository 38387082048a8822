// Package unbias turns each parsed Record into a Contribution: the
// Horvitz–Thompson estimate of one value of the record with the statistics
// its interval needs (ci.Stats). It works record by record, so nothing is
// ever summed before it is unbiased.
package unbias
