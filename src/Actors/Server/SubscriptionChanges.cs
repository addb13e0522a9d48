using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Cluster;
using Courier.Actors.Connections;
using Courier.Actors.Routing;

namespace Courier.Actors.Server;

/// <summary>
/// Puts SUB/UNSUB batches in effect: told to the routes and leaf node links first (so an RS+ is queued ahead of any later
/// message of the client), then applied by the account's router shards, which acknowledge once their
/// snapshot is published (invariant 2).
/// </summary>
internal sealed class SubscriptionChanges(RouteTable? routes, Leaf.LeafTable? leafs = null, Gateway.GatewayTable? gateways = null)
{
    private readonly Gateway.GatewayTable? _gateways = gateways;
    private readonly RouteTable? _routes = routes;
    private readonly Leaf.LeafTable? _leafs = leafs;

    /// <summary>Makes a batch of subscription changes effective; completes when every shard involved has published it.</summary>
    public Task ApplyAsync(IReadOnlyList<SubChange> changes)
    {
        if (changes.Count == 0)
        {
            return Task.CompletedTask;
        }

        // Routes first: an RS+ is queued ahead of any message this client publishes after the SUB.
        _routes?.OnLocalChanges(changes);
        _leafs?.OnChanges(changes);
        _gateways?.OnChanges(changes);

        var account = changes[0].Sub.Account;
        var first = changes[0].Sub.Shard;
        var single = true;
        for (var i = 1; i < changes.Count && single; i++)
        {
            single = changes[i].Sub.Shard == first && ReferenceEquals(changes[i].Sub.Account, account);
        }

        if (single && account.Routers is { } routers)
        {
            return routers[first].Ask<SubjectRouter.Protocol.Applied>(ApplyFor(changes), null, CancellationToken.None);
        }

        return ApplyToEveryShardAsync(changes);
    }

    // A batch over several shards (or accounts), or for an account whose shards are still starting.
    private static async Task ApplyToEveryShardAsync(IReadOnlyList<SubChange> changes)
    {
        var tasks = new List<Task>();
        var seen = new HashSet<(Account, int)>();
        foreach (var change in changes)
        {
            if (seen.Add((change.Sub.Account, change.Sub.Shard)))
            {
                var routers = await change.Sub.Account.RoutersAsync().ConfigureAwait(false);
                tasks.Add(routers[change.Sub.Shard].Ask<SubjectRouter.Protocol.Applied>(ApplyFor(changes), null, CancellationToken.None));
            }
        }

        await Task.WhenAll(tasks).ConfigureAwait(false);
    }

    // The shard answers the ask's temporary actor; no timeout (a shard that restarts answers after its rebuild).
    private static Func<IActorRef, object> ApplyFor(IReadOnlyList<SubChange> changes) =>
        replyTo => new SubjectRouter.Protocol.Apply(changes, replyTo);

    /// <summary>Like <see cref="ApplyAsync"/>, for removals nobody waits on (a closing client, auto-unsubscribe).</summary>
    public void ApplyWithoutWaiting(IReadOnlyList<SubChange> changes)
    {
        _routes?.OnLocalChanges(changes);
        _leafs?.OnChanges(changes);
        _gateways?.OnChanges(changes);
        var seen = new HashSet<(Account, int)>();
        foreach (var change in changes)
        {
            if (!seen.Add((change.Sub.Account, change.Sub.Shard)))
            {
                continue;
            }

            if (change.Sub.Account.Routers is { } routers)
            {
                routers[change.Sub.Shard].Tell(new SubjectRouter.Protocol.Apply(changes, null));
            }
            else
            {
                _ = TellWhenStartedAsync(change.Sub.Account, change.Sub.Shard, changes);
            }
        }
    }

    private static async Task TellWhenStartedAsync(Account account, int shard, IReadOnlyList<SubChange> changes)
    {
        var routers = await account.RoutersAsync().ConfigureAwait(false);
        routers[shard].Tell(new SubjectRouter.Protocol.Apply(changes, null));
    }
}
