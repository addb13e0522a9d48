using Akka.Actor;
using Courier.Actors.Raft;
using Courier.Raft;

namespace Courier.Gateway.Monitoring;

internal sealed partial class MonitoringPages
{
    /// <summary>
    /// /raftz: every Raft group hosted here (replicated streams), optionally one account's (<c>acc</c>) or
    /// one group (<c>group</c>); empty on a server that is not clustered.
    /// </summary>
    public async Task<Raftz> RaftzAsync(string account, string group)
    {
        var groups = new List<RaftzGroup>();
        if (_broker.JetStreamCluster is { } cluster && !cluster.RaftHost.IsNobody())
        {
            var statuses = await cluster.RaftHost.Ask<(string Name, RaftStatus Status)[]>(RaftHost.Protocol.GetStatus.Instance, TimeSpan.FromSeconds(5)).ConfigureAwait(false);
            foreach (var (name, status) in statuses.OrderBy(s => s.Name, StringComparer.Ordinal))
            {
                var (owner, stream) = cluster.Groups.TryGetValue(name, out var known) ? known : ("", "");
                if ((account.Length > 0 && owner != account) || (group.Length > 0 && name != group))
                {
                    continue;
                }

                groups.Add(new RaftzGroup
                {
                    Group = name,
                    Account = owner,
                    Stream = stream,
                    Id = Actors.JetStream.JetStreamCluster.MemberToken(status.Id),
                    Role = status.Role.ToString().ToLowerInvariant(),
                    Term = status.Term,
                    Leader = status.Leader == 0 ? null : cluster.Member(status.Leader)?.Name ?? Actors.JetStream.JetStreamCluster.MemberToken(status.Leader),
                    Commit = status.Commit,
                    Applied = status.Applied,
                    FirstIndex = status.FirstIndex,
                    LastIndex = status.LastIndex,
                    Peers = [.. status.Peers.Select(p => new RaftzPeer
                    {
                        Id = Actors.JetStream.JetStreamCluster.MemberToken(p.Id),
                        Name = cluster.Member(p.Id)?.Name,
                        Match = p.Match,
                        Active = p.RecentActive,
                        Learner = p.IsLearner,
                    })],
                });
            }
        }

        return new Raftz { ServerId = _broker.ServerId, ServerName = _broker.ServerName, Now = DateTime.UtcNow, Groups = groups };
    }
}
