using Courier.Actors.Accounts;
using Courier.Actors.Cluster;
using Courier.Actors.Server;
using Courier.Actors.Server.Identity;

namespace Courier.Actors.Events;

/// <summary>
/// What the system account's events (<see cref="SystemEvents"/>, <see cref="ClaimsUpdates"/>) use of
/// the node, made once by the broker when it starts: not the broker itself.
/// </summary>
/// <param name="Options">The node's options: the <c>server</c> part of every event (host, version, JetStream, domain).</param>
/// <param name="ServerId">This node's server id.</param>
/// <param name="ServerName">This node's server name.</param>
/// <param name="Routes">The node's routes, for the cluster's name (which a dynamic cluster may adopt later); null without a <c>cluster { }</c>.</param>
/// <param name="Registry">The node's clients: an account's connection counts, the users a pushed JWT revokes.</param>
/// <param name="Accounts">The node's accounts: the ones a MEMORY or cache resolver holds.</param>
/// <param name="Trust">Operator mode's trusted keys and resolver; null without an <c>operator</c>.</param>
internal sealed record SystemEventsContext(
    ServerOptions Options,
    string ServerId,
    string ServerName,
    RouteTable? Routes,
    ClientRegistry Registry,
    AccountRegistry Accounts,
    OperatorTrust? Trust);
