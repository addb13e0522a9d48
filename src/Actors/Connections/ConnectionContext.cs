using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Cluster;
using Courier.Actors.Events;
using Courier.Actors.Mqtt;
using Courier.Actors.Server;
using Courier.Actors.Server.Authentication;
using Courier.Actors.Server.Identity;
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
    ServerStats Stats);

/// <summary>What a NATS client (<see cref="ClientConnection"/>) uses beyond <see cref="ConnectionContext"/>, made when the broker has started.</summary>
/// <param name="Node">What every connection uses.</param>
/// <param name="Authentication">CONNECT's check: users, nkeys, JWTs, certificates.</param>
/// <param name="Info">The INFO a client gets.</param>
/// <param name="Tls">The client listener's <c>tls { }</c>, if any.</param>
/// <param name="Trust">Operator mode (a WebSocket cookie's JWT), if configured.</param>
/// <param name="Events">The system account's CONNECT/DISCONNECT events, if there is a system account.</param>
/// <param name="ActivateAccount">Starts an account's JetStream when its first client connects.</param>
internal sealed record ClientContext(
    ConnectionContext Node,
    Authenticator Authentication,
    ClientInfo Info,
    TlsTransport? Tls,
    OperatorTrust? Trust,
    SystemEvents? Events,
    Func<Account, Task> ActivateAccount);

/// <summary>What an MQTT client (<see cref="MqttConnection"/>) uses beyond <see cref="ConnectionContext"/>, made when the broker has started.</summary>
/// <param name="Node">What every connection uses.</param>
/// <param name="Authentication">CONNECT's check (user and password, certificates).</param>
/// <param name="Tls">The MQTT listener's <c>tls { }</c>, if any.</param>
/// <param name="Sessions">The session registry a CONNECT attaches to.</param>
/// <param name="Captures">The persistent sessions' capture barrier (PUBACK after their journal write).</param>
/// <param name="Retained">The retained messages, in memory.</param>
/// <param name="RetainedStore">Journals retained messages.</param>
internal sealed record MqttContext(
    ConnectionContext Node,
    Authenticator Authentication,
    TlsTransport? Tls,
    IActorRef Sessions,
    MqttCaptureLedger Captures,
    MqttRetainedMessages Retained,
    IActorRef RetainedStore);

/// <summary>What a route link (<see cref="RouteConnection"/>) uses beyond <see cref="ConnectionContext"/>.</summary>
/// <param name="Node">What every connection uses.</param>
/// <param name="Routes">The node's routes: a link registers there once the peer's INFO came.</param>
/// <param name="Cluster">The node's view of its cluster: route INFO, gossip, connect_urls.</param>
/// <param name="ServerId">This node's server id (a route to itself is dropped).</param>
/// <param name="ServerName">This node's name (a peer with the same name is refused).</param>
/// <param name="Tls">The <c>cluster { tls { } }</c> block, if any.</param>
internal sealed record RouteLinkContext(
    ConnectionContext Node,
    RouteTable Routes,
    ClusterView Cluster,
    string ServerId,
    string ServerName,
    TlsTransport? Tls);
