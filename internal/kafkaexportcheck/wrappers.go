package kafkaexportcheck

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/xexporter"
)

// Each wrapper checks the encoding, then starts the contrib exporter.

type traces struct {
	exporter.Traces
	check func(component.Host) error
}

func (e traces) Start(ctx context.Context, host component.Host) error {
	if err := e.check(host); err != nil {
		return err
	}
	return e.Traces.Start(ctx, host)
}

type logs struct {
	exporter.Logs
	check func(component.Host) error
}

func (e logs) Start(ctx context.Context, host component.Host) error {
	if err := e.check(host); err != nil {
		return err
	}
	return e.Logs.Start(ctx, host)
}

type metrics struct {
	exporter.Metrics
	check func(component.Host) error
}

func (e metrics) Start(ctx context.Context, host component.Host) error {
	if err := e.check(host); err != nil {
		return err
	}
	return e.Metrics.Start(ctx, host)
}

type profiles struct {
	xexporter.Profiles
	check func(component.Host) error
}

func (e profiles) Start(ctx context.Context, host component.Host) error {
	if err := e.check(host); err != nil {
		return err
	}
	return e.Profiles.Start(ctx, host)
}
