package kafkaexportcheck

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/xexporter"
)

// startCheck is what an exporter checks at Start, before the contrib one
// starts.
type startCheck func(component.Host) error

// Each wrapper checks the encoding, then starts the contrib exporter.

type traces struct {
	exporter.Traces
	check startCheck
}

func (e traces) Start(ctx context.Context, host component.Host) error {
	if err := e.check(host); err != nil {
		return err
	}
	return e.Traces.Start(ctx, host)
}

type logs struct {
	exporter.Logs
	check startCheck
}

func (e logs) Start(ctx context.Context, host component.Host) error {
	if err := e.check(host); err != nil {
		return err
	}
	return e.Logs.Start(ctx, host)
}

type metrics struct {
	exporter.Metrics
	check startCheck
}

func (e metrics) Start(ctx context.Context, host component.Host) error {
	if err := e.check(host); err != nil {
		return err
	}
	return e.Metrics.Start(ctx, host)
}

type profiles struct {
	xexporter.Profiles
	check startCheck
}

func (e profiles) Start(ctx context.Context, host component.Host) error {
	if err := e.check(host); err != nil {
		return err
	}
	return e.Profiles.Start(ctx, host)
}
