module github.com/locksmith-go/locksmith

go 1.26

require (
	github.com/petermattis/goid v0.0.0-20261109124353-7cfa343ad0ab
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
