package function

// This file holds the functions' logger: JSON records on standard output,
// at the level Lambda's logging configuration sets, and a writer that turns
// the lines of packages logging with fmt (package webhooks) into records.

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// LogLevelVar is the variable through which Lambda hands a custom runtime
// the function's application log level (LoggingConfig.ApplicationLogLevel,
// with LogFormat JSON): TRACE, DEBUG, INFO, WARN, ERROR or FATAL.
const LogLevelVar = "AWS_LAMBDA_LOG_LEVEL"

// NewLogger returns a function's logger: JSON records written to w, at the
// level getenv(LogLevelVar) names (TRACE as DEBUG, FATAL as ERROR; INFO
// when it is unset or unknown), so that a function configured with a higher
// ApplicationLogLevel writes, and is billed for, fewer lines, as Lambda's
// managed runtimes do.
func NewLogger(getenv func(string) string, w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToUpper(getenv(LogLevelVar)) {
	case "TRACE", "DEBUG":
		level = slog.LevelDebug
	case "WARN":
		level = slog.LevelWarn
	case "ERROR", "FATAL":
		level = slog.LevelError
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// Lines returns a writer that logs each line written to it (without its
// newline) as one record of logger at level, its text the message and
// source its "source" attribute: the lines of a package that logs with fmt
// to an io.Writer become records as queryable as the rest. A line is logged
// once its newline is written.
func Lines(logger *slog.Logger, level slog.Level, source string) io.Writer {
	return &lines{logger: logger, level: level, source: source}
}

type lines struct {
	logger *slog.Logger
	level  slog.Level
	source string
	mu     sync.Mutex
	buf    []byte
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		msg := strings.TrimPrefix(string(l.buf[:i]), l.source+": ")
		l.logger.Log(context.Background(), l.level, msg, "source", l.source)
		l.buf = l.buf[i+1:]
	}
}
