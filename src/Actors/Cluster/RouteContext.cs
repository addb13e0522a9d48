using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Cluster;

/// <summary>Makes the data path of a route link: a connection over the link's stream, owned by its <see cref="RouteActor"/>.</summary>
internal delegate RouteConnection RouteConnectionFactory(Stream stream, Socket socket, ulong id, IActorRef owner, RouteLink link);

/// <summary>
/// What the route actors (<see cref="RouteManager"/> and its <see cref="RouteActor"/>s) use of the
/// node, made once by the broker when it starts: not the broker itself.
/// </summary>
/// <param name="Options">The node's options: <c>cluster { }</c> (retries, authorization) and the PING/PONG keepalive.</param>
/// <param name="ServerId">This node's server id (a gossiped route to itself is not dialled).</param>
/// <param name="Routes">The node's routes: which peers are connected.</param>
/// <param name="Registry">Gives each link its id and registers its connection.</param>
/// <param name="CreateConnection">Makes a link's data path.</param>
/// <param name="Logger">The node's logger.</param>
internal sealed record RouteContext(
    ServerOptions Options,
    string ServerId,
    RouteTable Routes,
    ClientRegistry Registry,
    RouteConnectionFactory CreateConnection,
    ILogger Logger);
