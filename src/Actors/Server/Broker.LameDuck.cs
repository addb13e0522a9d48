using Courier.Actors.Connections;
using Courier.Protocols.Nats;

namespace Courier.Actors.Server;

/// <summary>Lame duck mode's part in the broker: telling clients, then closing them one by one.</summary>
public sealed partial class Broker
{
    /// <summary>Whether lame duck mode has begun (the listeners are closed or closing).</summary>
    public bool IsLameDuck { get; private set; }

    /// <summary>
    /// Marks the broker as in lame duck mode, tells its routes (a route INFO with <c>"ldm":true</c>:
    /// peers stop advertising this node's client URLs, nats-server's sendLDMToRoutes), and sends every
    /// NATS client that accepts async INFO (CONNECT protocol 1, as nats-server's sendAsyncInfoToClients)
    /// an INFO with <c>"ldm":true</c> whose <c>connect_urls</c> are the other nodes' only, so clients
    /// reconnect there. Returns the clients open at that moment, for the host to close gradually.
    /// </summary>
    internal IReadOnlyList<Connection> EnterLameDuckMode()
    {
        IsLameDuck = true;
        ClusterView.EnterLameDuckMode();

        var clients = new List<Connection>();
        foreach (var client in Clients)
        {
            if (client.IsClosed || client.IsServerLink)
            {
                continue;
            }

            clients.Add(client);
            if (client is ClientConnection { ConnectOptions.Protocol: >= 1 } nats)
            {
                var info = Info.Create(nats);
                info.LameDuckMode = true;
                // INFO {json}\r\n
                client.Outbound.Write(ProtocolWriter.Info(info));
                client.Outbound.Signal();
            }
        }

        return clients;
    }
}
