package sharedcomponent

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
)

// counted records how often it was started and shut down.
type counted struct {
	starts, stops int
	startErr      error
}

func (c *counted) Start(context.Context, component.Host) error { c.starts++; return c.startErr }
func (c *counted) Shutdown(context.Context) error              { c.stops++; return nil }

type key struct{ name string }

func TestUsersShareOneInstanceUntilTheLastShutdown(t *testing.T) {
	m := NewMap[*key, *counted]()
	k := &key{"a"}
	created := 0
	create := func() (*counted, error) { created++; return &counted{}, nil }
	ctx := context.Background()

	logs, err := m.Acquire(k, create)
	require.NoError(t, err)
	traces, err := m.Acquire(k, create)
	require.NoError(t, err)
	require.Equal(t, 1, created)
	require.Same(t, logs.Unwrap(), traces.Unwrap())

	require.NoError(t, logs.Start(ctx, componenttest.NewNopHost()))
	require.NoError(t, traces.Start(ctx, componenttest.NewNopHost()))
	assert.Equal(t, 1, logs.Unwrap().starts)

	require.NoError(t, logs.Shutdown(ctx))
	require.NoError(t, logs.Shutdown(ctx)) // a second call by the same user is not a second user leaving
	assert.Zero(t, traces.Unwrap().stops, "shut down while a user remains")
	require.NoError(t, traces.Shutdown(ctx))
	assert.Equal(t, 1, traces.Unwrap().stops)

	again, err := m.Acquire(k, create)
	require.NoError(t, err)
	assert.Equal(t, 2, created, "the last shutdown must forget the instance")
	assert.NotSame(t, logs.Unwrap(), again.Unwrap())
}

func TestKeysAreSeparate(t *testing.T) {
	m := NewMap[*key, *counted]()
	a, err := m.Acquire(&key{"a"}, func() (*counted, error) { return &counted{}, nil })
	require.NoError(t, err)
	b, err := m.Acquire(&key{"a"}, func() (*counted, error) { return &counted{}, nil })
	require.NoError(t, err)
	assert.NotSame(t, a.Unwrap(), b.Unwrap(), "equal configs at different addresses are different components")
}

func TestStartErrorGoesToEveryUser(t *testing.T) {
	m := NewMap[*key, *counted]()
	k := &key{"a"}
	boom := errors.New("boom")
	create := func() (*counted, error) { return &counted{startErr: boom}, nil }
	h1, err := m.Acquire(k, create)
	require.NoError(t, err)
	h2, err := m.Acquire(k, create)
	require.NoError(t, err)
	ctx := context.Background()
	assert.ErrorIs(t, h1.Start(ctx, componenttest.NewNopHost()), boom)
	assert.ErrorIs(t, h2.Start(ctx, componenttest.NewNopHost()), boom)
	assert.Equal(t, 1, h1.Unwrap().starts)
}

func TestCreateErrorLeavesNoEntry(t *testing.T) {
	m := NewMap[*key, *counted]()
	k := &key{"a"}
	boom := errors.New("boom")
	_, err := m.Acquire(k, func() (*counted, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	created := false
	_, err = m.Acquire(k, func() (*counted, error) { created = true; return &counted{}, nil })
	require.NoError(t, err)
	assert.True(t, created)
}

func TestShutdownWithoutStart(t *testing.T) {
	m := NewMap[*key, *counted]()
	h, err := m.Acquire(&key{"a"}, func() (*counted, error) { return &counted{}, nil })
	require.NoError(t, err)
	require.NoError(t, h.Shutdown(context.Background()))
	assert.Equal(t, 1, h.Unwrap().stops)
	assert.Zero(t, h.Unwrap().starts)
}
