namespace Courier.Raft;

public sealed partial class RaftNode
{
    /// <summary>
    /// May campaign: a voter in the latest configuration, or one whose own removal is not yet
    /// committed. Without the second, a leader that appended its removal and lost its quorum before
    /// committing it would hold the only copy of the longest log and never campaign, while the others
    /// (still counting it) could not win without its vote: the group stuck forever. It campaigns
    /// under its latest configuration, without its own vote, and steps down once the removal commits
    /// (dissertation §4.2.2, a leader outside its configuration).
    /// </summary>
    private bool Promotable =>
        _config.IsVoter(Id) || (_configIndex > _log.Committed && ConfigurationAt(_log.Committed).Config.IsVoter(Id));

    /// <summary>
    /// Counts toward an election. A member that may not campaign keeps counting past the timeout
    /// (etcd/raft's way), so the lease it grants its last known leader ends for good: a learner or a
    /// voter whose log has not yet seen its own addition (chaos seeds 3000 and 5636) must not go on
    /// refusing the votes of the candidate it needs to hear from to catch up, because of a leader it
    /// heard long ago.
    /// </summary>
    private void TickElection()
    {
        if (_electionElapsed < int.MaxValue) _electionElapsed++;
        if (_electionElapsed < _randomizedElectionTimeout || !Promotable || _repairFloor != 0) return;
        _electionElapsed = 0;
        ResetRandomizedElectionTimeout();
        Campaign(_options.PreVote, transfer: false);
    }

    /// <summary>Starts a pre-vote (if <paramref name="pre"/>) or an election.</summary>
    private void Campaign(bool pre, bool transfer)
    {
        if (!Promotable || _repairFloor != 0) return; // a member repairing its log cannot lead (RepairFloor)
        ulong voteTerm;
        MessageType request;
        if (pre)
        {
            Role = RaftRole.PreCandidate;
            Leader = 0;
            voteTerm = Term + 1;
            request = MessageType.PreVote;
        }
        else
        {
            Term++;
            Vote = Id;
            Role = RaftRole.Candidate;
            Leader = 0;
            voteTerm = Term;
            request = MessageType.Vote;
        }
        _votes.Clear();
        _progress.Clear();
        _electionElapsed = 0;
        ResetRandomizedElectionTimeout();
        if (Poll(Id, granted: true)) return; // a group of one decides alone
        foreach (var voter in _config.Voters)
        {
            if (voter == Id) continue;
            Send(new RaftMessage { From = Id, Type = request, To = voter, Term = voteTerm, Index = _log.LastIndex, LogTerm = _log.LastTerm, Transfer = transfer });
        }
    }

    /// <summary>Counts one answer; true when it decided the campaign.</summary>
    private bool Poll(ulong from, bool granted)
    {
        if (!_config.IsVoter(from)) return false;
        _votes.TryAdd(from, granted);
        int yes = 0, no = 0;
        foreach (var vote in _votes.Values)
        {
            if (vote) yes++;
            else no++;
        }
        if (yes >= _config.Quorum)
        {
            if (Role == RaftRole.PreCandidate) Campaign(pre: false, transfer: false);
            else BecomeLeader();
            return true;
        }
        if (no >= _config.Quorum)
        {
            BecomeFollower(Term, 0);
            return true;
        }
        return false;
    }

    private void HandleVoteRequest(RaftMessage m)
    {
        var pre = m.Type == MessageType.PreVote;
        // §5.2 one vote per term; a pre-vote for a later term promises nothing.
        var canVote = Vote == m.From || (Vote == 0 && Leader == 0) || (pre && m.Term > Term);
        var responseType = pre ? MessageType.PreVoteResponse : MessageType.VoteResponse;
        var upToDate = _repairFloor == 0
            ? _log.IsUpToDate(m.Index, m.LogTerm)
            : m.LogTerm > _repairFloorTerm || (m.LogTerm == _repairFloorTerm && m.Index >= _repairFloor); // as up-to-date as the log it lost (RepairFloor)
        if (canVote && upToDate)
        {
            Send(new RaftMessage { From = Id, Type = responseType, To = m.From, Term = m.Term });
            if (!pre)
            {
                Vote = m.From;
                _electionElapsed = 0;
            }
        }
        else
        {
            Send(new RaftMessage { From = Id, Type = responseType, To = m.From, Term = Term, Reject = true });
        }
    }

    private void StepCandidate(RaftMessage m)
    {
        switch (m.Type)
        {
            case MessageType.Append:
            case MessageType.Heartbeat:
            case MessageType.Snapshot:
                // A leader of our term (a pre-candidate's term is the leader's): follow it.
                BecomeFollower(m.Term, m.From);
                StepFollower(m);
                break;
            case MessageType.PreVoteResponse when Role == RaftRole.PreCandidate:
                if (!m.Reject && m.Term != Term + 1) return; // an answer to an older pre-vote
                Poll(m.From, !m.Reject);
                break;
            case MessageType.VoteResponse when Role == RaftRole.Candidate:
                Poll(m.From, !m.Reject);
                break;
        }
    }

    private void BecomeLeader()
    {
        Role = RaftRole.Leader;
        Leader = Id;
        _electionElapsed = 0;
        _heartbeatElapsed = 0;
        _leadTransferee = 0;
        _votes.Clear();
        _progress.Clear();
        foreach (var member in _config.Voters.Concat(_config.Learners))
            _progress[member] = new Progress(_log.LastIndex + 1, _config.IsLearner(member)) { RecentActive = true };
        if (_progress.TryGetValue(Id, out var self))
        {
            self.MaybeUpdate(_log.Stable);
            self.BecomeReplicate();
        }
        // §5.4.2 / §8: an empty entry of its own term lets the leader commit what earlier terms left.
        _noopIndex = _log.LastIndex + 1;
        _log.Append(new Entry(Term, _noopIndex, EntryType.Normal, ReadOnlyMemory<byte>.Empty));
        _broadcastPending = true;
    }
}
