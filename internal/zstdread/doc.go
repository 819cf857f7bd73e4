// Package zstdread reads a zstd stream and tells the stream's own damage
// (cut short, corrupted) apart from a failure to read what lies under it
// (an I/O error of the file), which is reported as it is.
package zstdread
