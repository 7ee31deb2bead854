// Package detect finds deadlocks among locksmith locks.
package detect
