module github.com/locksmith-go/locksmith

go 1.22

require (
	github.com/petermattis/goid v0.0.0-20261109124353-7cfa343ad0ab
	github.com/stretchr/testify v1.8.0
	go.uber.org/goleak v1.2.1
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
