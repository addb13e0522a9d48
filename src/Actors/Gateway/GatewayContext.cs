using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Gateway;

/// <summary>Makes the data path of a gateway link: a connection over the link's socket, owned by its <see cref="GatewayActor"/>.</summary>
internal delegate GatewayConnection GatewayConnectionFactory(Socket socket, ulong id, IActorRef owner, GatewayLink link);

/// <summary>What the gateway actors (<see cref="GatewayManager"/> and its <see cref="GatewayActor"/>s) use of the node.</summary>
/// <param name="Options">The node's options: <c>gateway { }</c> and the PING/PONG keepalive.</param>
/// <param name="Gateways">The node's gateway links (which outbound links are up).</param>
/// <param name="Registry">Gives each link its id and registers its connection.</param>
/// <param name="CreateConnection">Makes a link's data path.</param>
/// <param name="Logger">The node's logger.</param>
internal sealed record GatewayContext(
    ServerOptions Options,
    GatewayTable Gateways,
    ClientRegistry Registry,
    GatewayConnectionFactory CreateConnection,
    ILogger Logger);
