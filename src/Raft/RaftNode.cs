namespace Courier.Raft;

/// <summary>A member's role in its group.</summary>
public enum RaftRole : byte
{
    Follower,
    /// <summary>Asking whether it could win before it disturbs anyone (dissertation §9.6).</summary>
    PreCandidate,
    Candidate,
    Leader,
}

/// <summary>
/// One member of one Raft group, as a pure state machine (the shape of etcd/raft): the host feeds
/// it messages (<see cref="Step"/>), clock ticks (<see cref="Tick"/>) and proposals, and takes from
/// it, in one <see cref="Ready"/>, what to send, persist and apply. It owns no socket, file, clock,
/// thread or timer, so a simulation runs many of them in one process, seeded and replayable, and
/// the production host is an actor. Not thread-safe: one caller at a time.
/// </summary>
/// <remarks>
/// Membership is single-server changes that take effect when appended (dissertation §4.1): a
/// member always uses the latest configuration in its log, so a restart recovers it from its own
/// log with nothing else to persist.
/// </remarks>
public sealed partial class RaftNode
{
    private readonly RaftOptions _options;
    private readonly Random _random;
    private readonly RaftLog _log;
    private readonly Dictionary<ulong, Progress> _progress = [];
    private readonly Dictionary<ulong, bool> _votes = [];
    private readonly List<RaftMessage> _messages = [];
    private readonly List<RaftMessage> _earlyMessages = [];

    private Configuration _config;
    private ulong _configIndex;          // index of the entry that made _config (0: from the snapshot)
    private Snapshot? _snapshot;         // the latest snapshot, sent to followers that fell behind the log
    private Snapshot? _unstableSnapshot; // received from the leader, not yet persisted
    private HardState _persistedHardState;
    private ulong _appliedPending;       // last index handed out to apply in a Ready not yet advanced
    private bool _readyInFlight;
    private bool _broadcastPending;      // proposals since the last Ready: one append per peer carries them all
    private int _electionElapsed;
    private int _heartbeatElapsed;
    private int _randomizedElectionTimeout;
    private ulong _leadTransferee;
    private ulong _noopIndex;            // the leader's first entry of its term
    private ulong _repairFloor;          // see RepairFloor
    private ulong _repairFloorTerm;      // the term of the entry at the floor

    /// <summary>A member with the state it recovered from its own files, or a fresh one (<paramref name="state"/> null) that learns its group from the leader.</summary>
    public RaftNode(ulong id, RaftOptions options, PersistedState? state = null)
    {
        if (id == 0) throw new ArgumentOutOfRangeException(nameof(id), "0 means no member");
        if (options.ElectionTicks <= options.HeartbeatTicks) throw new ArgumentException("ElectionTicks must exceed HeartbeatTicks", nameof(options));
        Id = id;
        _options = options;
        _random = new Random(options.RandomSeed);
        _snapshot = state?.Snapshot;
        var meta = state?.Snapshot?.Meta ?? new SnapshotMeta(0, 0, Configuration.Empty);
        _log = new RaftLog(meta);
        _config = meta.Configuration;
        if (state is not null)
        {
            foreach (var entry in state.Entries)
            {
                if (entry.Index <= meta.Index) continue;
                _log.Append(entry);
            }
            _log.StableTo(_log.LastIndex, _log.LastTerm);
            var hard = state.HardState;
            if (hard.Commit > _log.LastIndex)
                throw new InvalidDataException($"persisted commit {hard.Commit} is beyond the persisted log ({_log.LastIndex})");
            Term = hard.Term;
            Vote = hard.Vote;
            _log.CommitTo(hard.Commit);
            _persistedHardState = hard;
            _repairFloor = state.RepairFloor > _log.LastIndex ? state.RepairFloor : 0;
            _repairFloorTerm = _repairFloor == 0 ? 0 : Math.Max(state.RepairFloorTerm, _log.LastTerm);
            RebuildConfiguration();
        }
        _appliedPending = _log.Applied;
        BecomeFollower(Term, 0);
    }

    public ulong Id { get; }
    public ulong Term { get; private set; }
    public ulong Vote { get; private set; }
    /// <summary>The leader this member follows (itself when leading), 0 when it knows none.</summary>
    public ulong Leader { get; private set; }
    public RaftRole Role { get; private set; }
    public Configuration Configuration => _config;
    public ulong CommitIndex => _log.Committed;
    public ulong AppliedIndex => _log.Applied;
    public ulong LastIndex => _log.LastIndex;
    public ulong FirstIndex => _log.FirstIndex;

    /// <summary>
    /// 0, or the index this member's damaged log must reach again, from a leader, before it votes or campaigns
    /// (<see cref="PersistedState.RepairFloor"/>). A member that lost entries it had acknowledged could otherwise
    /// help elect a leader without them, and a committed entry would be gone (the corrupted-minority loss Jepsen
    /// found in nats-server 2.12). Meanwhile it votes as the log it lost would have (§5.4.1 against the floor's
    /// index and term), so a group with one member repairing and one down still elects a leader that has them.
    /// The host keeps it on disk until it is 0.
    /// </summary>
    public ulong RepairFloor => _repairFloor;

    private void LiftRepairFloor()
    {
        if (_repairFloor != 0 && _log.LastIndex >= _repairFloor) _repairFloor = _repairFloorTerm = 0;
    }

    /// <summary>
    /// Starts a new group: every initial member calls this with the same voters, so their logs begin
    /// identical (one committed membership entry per voter, term 1). The host writes and syncs the
    /// Ready that follows before the member takes part: those entries count as committed everywhere.
    /// </summary>
    public void Bootstrap(IReadOnlyList<ulong> voters)
    {
        if (_log.LastIndex != 0 || Term != 0) throw new InvalidOperationException("bootstrap of a member that already has state");
        if (voters.Count == 0) throw new ArgumentException("no voters", nameof(voters));
        Term = 1;
        foreach (var voter in voters)
        {
            var change = new ConfChange(ConfChangeKind.AddVoter, voter);
            _log.Append(new Entry(1, _log.LastIndex + 1, EntryType.ConfChange, change.Encode()));
        }
        _log.CommitTo(_log.LastIndex);
        RebuildConfiguration();
        BecomeFollower(Term, 0);
    }

    /// <summary>
    /// Campaigns now instead of at the next election timeout (with a pre-vote when enabled): the host's
    /// way to elect a new group's first leader at once. A leader, or a member that may not campaign, ignores it.
    /// </summary>
    public void Campaign()
    {
        if (Role == RaftRole.Leader || !Promotable) return;
        _electionElapsed = 0;
        Campaign(_options.PreVote, transfer: false);
    }

    /// <summary>One tick of the host's monotonic clock.</summary>
    public void Tick()
    {
        if (Role == RaftRole.Leader) TickLeader();
        else TickElection();
    }

    /// <summary>A message from another member of this group.</summary>
    public void Step(RaftMessage m)
    {
        if (m.To != Id) return;
        if (m.Term > Term)
        {
            if (m.Type is MessageType.Vote or MessageType.PreVote && !m.Transfer && InLease())
                return; // §4.2.3: a leader is alive; a removed or partitioned member must not disturb it
            if (m.Type == MessageType.PreVote || (m.Type == MessageType.PreVoteResponse && !m.Reject))
            {
                // A pre-vote asks about a future term, and a granted answer speaks of it: our term stays.
            }
            else
            {
                var leader = m.Type is MessageType.Append or MessageType.Heartbeat or MessageType.Snapshot ? m.From : 0;
                BecomeFollower(m.Term, leader);
            }
        }
        else if (m.Term < Term)
        {
            if (m.Type is MessageType.Append or MessageType.Heartbeat)
                Send(new RaftMessage { From = Id, Type = MessageType.AppendResponse, To = m.From, Term = Term, Index = m.Index, Reject = false }); // tells a stale leader our term; it steps down
            else if (m.Type == MessageType.PreVote)
                Send(new RaftMessage { From = Id, Type = MessageType.PreVoteResponse, To = m.From, Term = Term, Reject = true });
            return;
        }

        switch (m.Type)
        {
            case MessageType.Vote:
            case MessageType.PreVote:
                HandleVoteRequest(m);
                return;
        }

        switch (Role)
        {
            case RaftRole.Leader: StepLeader(m); break;
            case RaftRole.PreCandidate:
            case RaftRole.Candidate: StepCandidate(m); break;
            default: StepFollower(m); break;
        }
    }

    private bool InLease() =>
        _options.CheckQuorum && Leader != 0 && _electionElapsed < _options.ElectionTicks;

    private void Send(RaftMessage m)
    {
        // A leader's own durability is counted when the host advances, so its appends may leave
        // while it writes; everything else promises something the write must first make durable.
        var early = Role == RaftRole.Leader && _persistedHardState.Term == Term &&
                    m.Type is MessageType.Append or MessageType.Heartbeat or MessageType.Snapshot or MessageType.TimeoutNow;
        (early ? _earlyMessages : _messages).Add(m);
    }

    private void ResetRandomizedElectionTimeout() =>
        _randomizedElectionTimeout = _options.ElectionTicks + _random.Next(_options.ElectionTicks);

    private void BecomeFollower(ulong term, ulong leader)
    {
        if (term != Term)
        {
            Term = term;
            Vote = 0;
        }
        Role = RaftRole.Follower;
        Leader = leader;
        _electionElapsed = 0;
        _heartbeatElapsed = 0;
        _leadTransferee = 0;
        _broadcastPending = false;
        _votes.Clear();
        _progress.Clear();
        ResetRandomizedElectionTimeout();
    }

    /// <summary>The latest configuration in the log, or the snapshot's.</summary>
    private void RebuildConfiguration()
    {
        var (config, index) = ConfigurationAt(_log.LastIndex);
        SetConfiguration(config, index);
    }

    private void SetConfiguration(Configuration config, ulong index)
    {
        _config = config;
        _configIndex = index;
        if (Role != RaftRole.Leader) return;
        foreach (var member in _progress.Keys.ToArray())
            if (!config.Contains(member) && member != Id) _progress.Remove(member);
        foreach (var member in config.Voters.Concat(config.Learners))
        {
            if (_progress.TryGetValue(member, out var pr)) pr.IsLearner = config.IsLearner(member);
            else _progress[member] = new Progress(_log.LastIndex + 1, config.IsLearner(member)) { RecentActive = true };
        }
    }

    /// <summary>
    /// The configuration as of <paramref name="index"/>: the snapshot's with every membership change up
    /// to it applied, and the index of the last such change (0: the snapshot's own).
    /// </summary>
    private (Configuration Config, ulong Index) ConfigurationAt(ulong index)
    {
        var config = _log.SnapshotMeta.Configuration;
        ulong changedAt = 0;
        for (var i = _log.FirstIndex; i <= index; i++)
        {
            var entry = _log.At(i);
            if (entry.Type != EntryType.ConfChange) continue;
            config = config.Apply(ConfChange.Decode(entry.Data.Span));
            changedAt = i;
        }
        return (config, changedAt);
    }

    /// <summary>
    /// The host's state machine image up to <paramref name="index"/> (at most the applied index): the
    /// log before it is dropped, and followers that fell behind get this snapshot. Returns the snapshot,
    /// which the host persists before it drops its own log prefix.
    /// </summary>
    public Snapshot Compact(ulong index, ReadOnlyMemory<byte> data)
    {
        if (index > _log.Applied) throw new ArgumentOutOfRangeException(nameof(index), $"compact to {index} beyond applied {_log.Applied}");
        if (index <= _log.SnapshotIndex) throw new ArgumentOutOfRangeException(nameof(index), $"compact to {index}: the log already starts after {_log.SnapshotIndex}");
        var meta = new SnapshotMeta(index, _log.TermOrZero(index), ConfigurationAt(index).Config);
        _snapshot = new Snapshot(meta, data);
        _log.Compact(meta);
        return _snapshot;
    }
}
