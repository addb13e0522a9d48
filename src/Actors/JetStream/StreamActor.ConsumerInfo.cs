using Akka.Actor;
using Akka.Event;
using Courier.Actors.Raft;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// Consumer API answers made of consumers' infos (CONSUMER.INFO, CONSUMER.LIST, a create's reply):
/// the infos are asked of the consumer actors off this actor's turn, and the answer is told back to
/// be replied in a turn of its own. The stream keeps storing and answering meanwhile; it never waits
/// inside a turn for a consumer (as <see cref="JetStreamApi"/> gathers the account detail).
/// </summary>
internal sealed partial class StreamActor
{
    /// <summary>How long a consumer has to answer for its info (as before: a consumer that is going away may never).</summary>
    private static readonly TimeSpan ConsumerInfoTimeout = TimeSpan.FromSeconds(10);

    /// <summary>Replies with <paramref name="consumer"/>'s info (asked with <paramref name="ask"/>) once it answers, typed <paramref name="type"/>.</summary>
    private void ReplyConsumerInfoLater(IActorRef consumer, object ask, string? replyTo, string type) =>
        _ = AskConsumerInfoAsync(Self, consumer, ask, replyTo, type, _replication is { } replication ? (replication.Host, replication.Group) : null);

    /// <summary>CONSUMER.LIST's page: the consumers' infos, asked of all at once, in the page's (name) order.</summary>
    private void ReplyConsumerListLater(IActorRef[] page, int total, int offset, string? replyTo) =>
        _ = GatherConsumerListAsync(Self, page, total, offset, replyTo);

    /// <summary>Asks for a consumer's info and tells <paramref name="self"/> the answer, or that there was none.</summary>
    /// <remarks>
    /// Not Akka's PipeTo: a plain async method that returns Task is precompiled into the ReadyToRun image,
    /// while PipeTo's generic state machine over the reply's type was not, and a fresh server JIT-compiled it
    /// (four methods, FullOpts) inside its first consumer create. With <c>group</c> (a replicated stream's Raft host
    /// and group) the group's status is asked for alongside, for the <c>cluster</c> block's replicas (the consumer's
    /// are the stream's: it runs where the stream leads).
    /// </remarks>
    private static async Task AskConsumerInfoAsync(IActorRef self, IActorRef consumer, object ask, string? replyTo, string type, (IActorRef Host, string Group)? group = null)
    {
        try
        {
            var status = group is { } g ? g.Host.Ask<RaftHost.Protocol.GroupStatus>(new RaftHost.Protocol.GetGroupStatus(g.Group), ConsumerInfoTimeout) : null;
            var info = await consumer.Ask<ConsumerInfoResponse>(ask, ConsumerInfoTimeout).ConfigureAwait(false);
            RaftHost.Protocol.GroupStatus? groupStatus = null;
            if (status is not null)
            {
                try
                {
                    groupStatus = await status.ConfigureAwait(false);
                }
                catch (AskTimeoutException)
                {
                    // answered without the replicas
                }
            }

            self.Tell(new ConsumerInfoAnswer(replyTo, type, info, groupStatus));
        }
        catch (Exception e)
        {
            self.Tell(new ConsumerUnanswered(type, e));
        }
    }

    /// <summary>
    /// Gathers a CONSUMER.LIST page and tells <paramref name="self"/> the answer (not PipeTo, as
    /// <see cref="AskConsumerInfoAsync"/>). A consumer that does not answer in time is left out, as
    /// nats-server leaves out one without info.
    /// </summary>
    private static async Task GatherConsumerListAsync(IActorRef self, IActorRef[] page, int total, int offset, string? replyTo)
    {
        const string Type = "io.nats.jetstream.api.v1.consumer_list_response";
        try
        {
            var asks = Array.ConvertAll(page, c => c.Ask<ConsumerInfoResponse>(ConsumerActor.Protocol.GetInfo.Instance, ConsumerInfoTimeout));
            var infos = new List<ConsumerInfoResponse>(asks.Length);
            foreach (var ask in asks)
            {
                try
                {
                    infos.Add(await ask.ConfigureAwait(false));
                }
                catch (Exception e) when (e is AskTimeoutException or TaskCanceledException)
                {
                    // a consumer that is going away
                }
            }

            self.Tell(new ConsumerListAnswer(replyTo, new ConsumerListResponse
            {
                Type = Type,
                Total = total,
                Offset = offset,
                Limit = ApiPaging.ListLimit,
                Consumers = infos,
            }));
        }
        catch (Exception e)
        {
            self.Tell(new ConsumerUnanswered(Type, e));
        }
    }

    private void OnConsumerInfoAnswer(ConsumerInfoAnswer answer)
    {
        answer.Info.Type = answer.Type;
        answer.Info.Cluster = answer.Status is { } status && _replication is not null ? ClusterInfoOf(status) : ConsumerClusterInfo();
        Reply(answer.ReplyTo, answer.Info, ConsumerJsonContext.Default.ConsumerInfoResponse);
    }

    private void OnConsumerListAnswer(ConsumerListAnswer answer)
    {
        foreach (var info in answer.Response.Consumers)
        {
            info.Cluster = ConsumerClusterInfo();
        }

        Reply(answer.ReplyTo, answer.Response, ConsumerJsonContext.Default.ConsumerListResponse);
    }

    /// <summary>
    /// A consumer's <c>cluster</c> block, as nats-server's consumer info carries in a cluster: the cluster's name
    /// and the leader, which for a replicated stream's consumer is the stream's leader (its state goes through the
    /// stream's log and it runs where the stream leads). INFO and create answers add the group's replicas
    /// (<see cref="ClusterInfoOf"/>); a LIST's entries, and an answer whose group status did not come, do not.
    /// </summary>
    private ClusterInfo? ConsumerClusterInfo() =>
        _replication is { } replication ? new ClusterInfo { Name = replication.ClusterName, Leader = _leader == 0 ? null : replication.NameOf(_leader) }
        : _clusterMember is { } member ? new ClusterInfo { Name = member.Cluster, Leader = member.Server }
        : null;

    // The requester times out, as it did when the stream waited for the consumer in its turn.
    private void OnConsumerUnanswered(ConsumerUnanswered unanswered) =>
        _log.Warning("stream {0}: no consumer info for a {1} ({2})", _config.Name, unanswered.Type, unanswered.Cause.GetBaseException().Message);

    /// <summary>A consumer's info, asked off the actor, to reply with as <see cref="Type"/>.</summary>
    private sealed record ConsumerInfoAnswer(string? ReplyTo, string Type, ConsumerInfoResponse Info, RaftHost.Protocol.GroupStatus? Status = null);

    /// <summary>CONSUMER.LIST's answer, gathered off the actor.</summary>
    private sealed record ConsumerListAnswer(string? ReplyTo, ConsumerListResponse Response);

    /// <summary>A consumer did not answer for its info (stopped, or past <see cref="ConsumerInfoTimeout"/>).</summary>
    private sealed record ConsumerUnanswered(string Type, Exception Cause);
}
