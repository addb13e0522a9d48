using Courier.Actors.Accounts;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Connections;

/// <summary>What every connection uses of its node, made once by the broker: not the broker itself.</summary>
/// <param name="Options">The node's options (max_pending, max_control_line, max_subscriptions, max_payload).</param>
/// <param name="Logger">The node's logger.</param>
/// <param name="Accounts">The accounts: a connection starts in the global one.</param>
/// <param name="Registry">Gives connections their ids; lists them for monitoring.</param>
/// <param name="Subscriptions">Puts SUB/UNSUB batches in effect in the routers and routes.</param>
/// <param name="Stats">The node's counters (slow consumers).</param>
internal sealed record ConnectionContext(
    ServerOptions Options,
    ILogger Logger,
    AccountRegistry Accounts,
    ClientRegistry Registry,
    SubscriptionChanges Subscriptions,
    ServerStats Stats)
{
    /// <summary>The node's gateway links (null without <c>gateway { }</c>): the publish path sends to them.</summary>
    public Gateway.GatewayTable? Gateways { get; init; }
}
