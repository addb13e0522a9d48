using System.Net.Sockets;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Actors.Leaf;

/// <summary>Makes the data path of a leaf node link: a connection over the link's socket, owned by its <see cref="LeafActor"/>, bound to <paramref name="account"/>.</summary>
internal delegate LeafConnection LeafConnectionFactory(Socket socket, ulong id, IActorRef owner, LeafLink link, Account account);

/// <summary>
/// What the leaf actors (<see cref="LeafManager"/> and its <see cref="LeafActor"/>s) use of the node,
/// made once by the broker when it starts: not the broker itself.
/// </summary>
/// <param name="Options">The node's options: <c>leafnodes { }</c> (remotes, reconnect, authorization timeout) and the PING/PONG keepalive.</param>
/// <param name="Accounts">The accounts a dialled link is bound to.</param>
/// <param name="Registry">Gives each link its id and registers its connection.</param>
/// <param name="CreateConnection">Makes a link's data path.</param>
/// <param name="Logger">The node's logger.</param>
internal sealed record LeafContext(
    ServerOptions Options,
    AccountRegistry Accounts,
    ClientRegistry Registry,
    LeafConnectionFactory CreateConnection,
    ILogger Logger);
