using Courier.Storage;
using Courier.Storage.Persistence;

namespace Courier.Actors.Tests.Persistence;

/// <summary>
/// A journal engine wrapper for fault injection: it counts and records write calls, can hold writes at a gate
/// (so a test knows a write is in flight), and can fail writes as a broken disk would.
/// </summary>
public sealed class TestJournal(IJournalStore inner) : IJournalStore
{
    private readonly ManualResetEventSlim _gate = new(initialState: true);
    private readonly List<ManualResetEventSlim> _heldReplays = [];
    private bool _holdReplays;
    private readonly SemaphoreSlim _entered = new(0);
    private readonly Lock _lock = new();
    private readonly List<int> _calls = [];

    /// <summary>The journal underneath.</summary>
    public IJournalStore Inner => inner;

    /// <summary>Atomic writes per WriteMessages call, in call order.</summary>
    public IReadOnlyList<int> Calls
    {
        get
        {
            lock (_lock)
            {
                return [.. _calls];
            }
        }
    }

    /// <summary>When set, writes throw this (after the gate).</summary>
    public Exception? FailWrites { get; set; }

    public IReadOnlyList<StoreWarning> Warnings => inner.Warnings;

    /// <summary>Holds every later write call at the gate until <see cref="Open"/>.</summary>
    public void Close()
    {
        while (_entered.Wait(0))
        {
            // forget the calls that came before: AwaitWriteEntered waits for a new one
        }

        _gate.Reset();
    }

    public void Open() => _gate.Set();

    /// <summary>Waits until a write call has reached the gate.</summary>
    public void AwaitWriteEntered(TimeSpan timeout)
    {
        if (!_entered.Wait(timeout))
        {
            throw new TimeoutException("No journal write arrived.");
        }
    }

    public void WriteMessages(ReadOnlySpan<JournalWrite> writes, Span<Exception?> rejections)
    {
        _entered.Release();
        if (!_gate.Wait(TimeSpan.FromSeconds(10)))
        {
            throw new TimeoutException("The test never opened the journal gate.");
        }

        lock (_lock)
        {
            _calls.Add(writes.Length);
        }

        if (FailWrites is { } failure)
        {
            throw failure;
        }

        inner.WriteMessages(writes, rejections);
    }

    /// <summary>Holds every later replay, each at its own gate, until <see cref="ReleaseReplay"/>.</summary>
    public void HoldReplays()
    {
        lock (_lock)
        {
            _holdReplays = true;
            _heldReplays.Clear();
        }
    }

    /// <summary>Lets the <paramref name="index"/>-th held replay (0: the first since <see cref="HoldReplays"/>) run.</summary>
    public void ReleaseReplay(int index)
    {
        lock (_lock)
        {
            _heldReplays[index].Set();
        }
    }

    /// <summary>Waits until <paramref name="count"/> replays are held.</summary>
    public void AwaitReplaysHeld(int count, TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (true)
        {
            lock (_lock)
            {
                if (_heldReplays.Count >= count)
                {
                    return;
                }
            }

            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"{count} replays did not arrive.");
            }

            Thread.Sleep(5);
        }
    }

    public long ReplayMessages(string persistenceId, long fromSequenceNr, long toSequenceNr, long max, Action<JournalRecord> onReplayed)
    {
        ManualResetEventSlim? gate = null;
        lock (_lock)
        {
            if (_holdReplays)
            {
                gate = new ManualResetEventSlim();
                _heldReplays.Add(gate);
            }
        }

        if (gate is not null && !gate.Wait(TimeSpan.FromSeconds(10)))
        {
            throw new TimeoutException("The test never released the replay.");
        }

        return inner.ReplayMessages(persistenceId, fromSequenceNr, toSequenceNr, max, onReplayed);
    }

    public long ReadHighestSequenceNr(string persistenceId, long fromSequenceNr = 0) => inner.ReadHighestSequenceNr(persistenceId, fromSequenceNr);

    public void DeleteMessagesTo(string persistenceId, long toSequenceNr) => inner.DeleteMessagesTo(persistenceId, toSequenceNr);

    /// <summary>Disposes the journal underneath (idempotent: a test may close it before the kit does).</summary>
    public void Dispose()
    {
        _gate.Set();
        lock (_lock)
        {
            _holdReplays = false;
            foreach (var held in _heldReplays)
            {
                held.Set();
            }
        }

        inner.Dispose();
    }
}
