//go:build !race

package rt

func raceHide() {}
func raceShow() {}
