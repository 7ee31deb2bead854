module github.com/locksmith-go/locksmith/bench

go 1.24.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/locksmith-go/locksmith v0.0.0
	github.com/sasha-s/go-deadlock v0.3.9
	github.com/stretchr/testify v1.11.1
	go.uber.org/goleak v1.2.1
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/petermattis/goid v0.0.0-20261109124353-7cfa343ad0ab // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace github.com/locksmith-go/locksmith => ../
