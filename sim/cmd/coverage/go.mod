// The coverage command is a module of its own so that gonum.org/v1/plot,
// which only draws docs/coverage.svg, stays out of heapest's build: `go
// install` of heapest never downloads it. It uses the heapest packages of
// this checkout through the replace directive.
module github.com/heapest/heapest/sim/cmd/coverage

go 1.26.8

require (
	github.com/heapest/heapest v0.0.0
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/grafana/jfr-parser v0.19.0 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/ulikunitz/xz v0.5.15 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.39.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

replace github.com/heapest/heapest => ../../..
