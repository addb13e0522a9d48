using Courier.Protocols.Subjects;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// Interest retention for one stream: a message stays while some consumer still needs it, and goes
/// once the last one that needed it has acknowledged it (nats-server's checkInterest/needAck). A
/// consumer needs a message when its filter matches and the message is above its ack floor and
/// not among what it acknowledged above the floor; a message nobody's filter matches is not kept at all.
/// </summary>
/// <remarks>
/// Consumers run on their own threads: each reports its releases (acks, a new floor) here, and
/// the report and the check against every other consumer happen under one lock, so two consumers
/// acknowledging the same message at once cannot both leave it to the other. Reports come once per
/// ack batch or delivery pass, never once per message. Join and Leave run on the stream actor,
/// which also reads <see cref="IsInteresting"/> for every message it stores.
/// </remarks>
internal sealed class InterestLedger
{
    private readonly Lock _lock = new();
    private readonly IStreamStore _store;
    private volatile InterestParticipant[] _participants = [];

    public InterestLedger(IStreamStore store)
    {
        _store = store;
    }

    /// <summary>
    /// Registers a consumer. Until it reports its starting state (<see cref="InterestParticipant.Begin"/>)
    /// it needs every message its filter matches.
    /// </summary>
    public InterestParticipant Join(string name, IReadOnlyList<string> filters)
    {
        var participant = new InterestParticipant(this, name, filters);
        lock (_lock)
        {
            _participants = [.. _participants.Where(p => p.Name != name), participant];
        }

        return participant;
    }

    /// <summary>
    /// Removes a deleted consumer and the messages only it still needed: every stored message above
    /// its ack floor that no remaining consumer needs (nats-server's cleanup on consumer delete).
    /// </summary>
    public void Leave(string name)
    {
        lock (_lock)
        {
            var leaving = _participants.FirstOrDefault(p => p.Name == name);
            if (leaving is null)
            {
                return;
            }

            _participants = [.. _participants.Where(p => p != leaving)];
            var start = Math.Max(leaving.Floor, _store.State().FirstSeq);
            for (var result = _store.LoadNextMessage(null, start); result is { Found: true, Message: { } m }; result = _store.LoadNextMessage(null, m.Sequence + 1))
            {
                if (!NeededByAnyone(m.Sequence, m.Subject, except: null))
                {
                    _store.RemoveMessage(m.Sequence);
                }
            }
        }
    }

    /// <summary>Whether some consumer's filter matches <paramref name="subject"/>: a message no one could need is not kept.</summary>
    public bool IsInteresting(ReadOnlySpan<char> subject)
    {
        foreach (var p in _participants)
        {
            if (p.Matches(subject))
            {
                return true;
            }
        }

        return false;
    }

    // Lock held. Removes each candidate that no consumer needs any more.
    internal void RemoveUnneeded(InterestParticipant releaser, ReadOnlySpan<ulong> candidates)
    {
        var participants = _participants;
        var subjectMatters = participants.Any(p => p != releaser && p.Filtered);
        foreach (var seq in candidates)
        {
            string? subject = null;
            if (subjectMatters)
            {
                if (_store.LoadMessage(seq) is not { Found: true, Message: { } m })
                {
                    continue; // already gone
                }

                subject = m.Subject;
            }

            if (!NeededByAnyone(seq, subject, releaser))
            {
                _store.RemoveMessage(seq);
            }
        }
    }

    internal Lock SyncRoot => _lock;

    // Lock held.
    private bool NeededByAnyone(ulong seq, string? subject, InterestParticipant? except)
    {
        foreach (var p in _participants)
        {
            if (p != except && p.Needs(seq, subject))
            {
                if (p.Starting)
                {
                    p.Deferred.Add(seq); // looked at again once it knows where it starts
                }

                return true;
            }
        }

        return false;
    }
}

/// <summary>
/// One consumer's part in <see cref="InterestLedger"/>: its filters, ack floor and the sequences it
/// acknowledged above the floor. Only the consumer's own actor calls <see cref="Begin"/> and
/// <see cref="Release"/>.
/// </summary>
internal sealed class InterestParticipant
{
    private readonly InterestLedger _ledger;
    private readonly IReadOnlyList<string> _filters;
    private readonly HashSet<ulong> _acked = [];
    private readonly List<ulong> _candidates = [];

    internal InterestParticipant(InterestLedger ledger, string name, IReadOnlyList<string> filters)
    {
        _ledger = ledger;
        Name = name;
        _filters = filters;
    }

    public string Name { get; }

    /// <summary>The stream sequence at and below which this consumer needs nothing.</summary>
    public ulong Floor { get; private set; }

    internal bool Filtered => _filters.Count > 0;

    /// <summary>Not yet told where it starts: it needs everything its filter matches.</summary>
    internal bool Starting { get; private set; } = true;

    /// <summary>Sequences kept only because this consumer was starting.</summary>
    internal List<ulong> Deferred { get; } = [];

    internal bool Matches(ReadOnlySpan<char> subject)
    {
        if (_filters.Count == 0)
        {
            return true;
        }

        foreach (var filter in _filters)
        {
            if (SubjectRules.Matches(subject, filter))
            {
                return true;
            }
        }

        return false;
    }

    // Lock held. A null subject means every consumer is unfiltered (nobody needs to look).
    internal bool Needs(ulong seq, string? subject) =>
        (Starting || (seq > Floor && !_acked.Contains(seq))) && (subject is null || Matches(subject));

    /// <summary>
    /// Where the consumer starts (or continues after a restart): its ack floor, the last stream
    /// sequence it delivered and which delivered ones are still unacknowledged (asked once per
    /// sequence between the two: a lookup, not a scan).
    /// </summary>
    public void Begin(ulong floor, ulong delivered, Func<ulong, bool> isPending)
    {
        lock (_ledger.SyncRoot)
        {
            Floor = floor;
            _acked.Clear();
            for (var seq = floor + 1; seq <= delivered; seq++)
            {
                if (!isPending(seq))
                {
                    _acked.Add(seq);
                }
            }

            Starting = false;
            var deferred = Deferred.ToArray();
            Deferred.Clear();
            _ledger.RemoveUnneeded(this, deferred);
        }
    }

    /// <summary>
    /// Reports what the consumer no longer needs: <paramref name="acked"/> sequences and everything
    /// up to <paramref name="floor"/>. Removes each such message that no other consumer needs.
    /// </summary>
    public void Release(IReadOnlyList<ulong> acked, ulong floor)
    {
        if (acked.Count == 0 && floor <= Floor)
        {
            return;
        }

        lock (_ledger.SyncRoot)
        {
            _candidates.Clear();
            for (var seq = Floor + 1; seq <= floor; seq++)
            {
                _candidates.Add(seq);
            }

            foreach (var seq in acked)
            {
                if (seq > floor && _acked.Add(seq))
                {
                    _candidates.Add(seq);
                }
            }

            if (floor > Floor)
            {
                if (_acked.Count > 0)
                {
                    // Forget acknowledgements the floor now covers.
                    if (floor - Floor < (ulong)_acked.Count)
                    {
                        for (var seq = Floor + 1; seq <= floor; seq++)
                        {
                            _acked.Remove(seq);
                        }
                    }
                    else
                    {
                        _acked.RemoveWhere(s => s <= floor);
                    }
                }

                Floor = floor;
            }

            _ledger.RemoveUnneeded(this, System.Runtime.InteropServices.CollectionsMarshal.AsSpan(_candidates));
        }
    }
}
