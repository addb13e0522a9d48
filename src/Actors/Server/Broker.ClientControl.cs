using Courier.Actors.Connections;
using Courier.Protocols.Nats;

namespace Courier.Actors.Server;

/// <summary>
/// One connection closed or told of lame duck mode on request, by its id: the system account's
/// <c>$SYS.REQ.SERVER.&lt;id&gt;.KICK</c> and <c>.LDM</c> (nats-server 2.10's DisconnectClientByID and LDMClientByID).
/// </summary>
public sealed partial class Broker
{
    /// <summary>
    /// Closes the client or leaf node link <paramref name="cid"/> with the reason <c>Kicked</c>; the error
    /// text as nats-server's when there is none (routes, gateways and Courier's own connections are not clients).
    /// </summary>
    internal string? KickClient(ulong cid)
    {
        foreach (var c in Clients)
        {
            if (c.Id == cid && !c.IsClosed && (c.IsLeaf || !(c.IsServerLink || c.IsInternal)))
            {
                c.RequestClose("Kicked");
                return null;
            }
        }

        return "no such client or leafnode id";
    }

    /// <summary>
    /// Sends client <paramref name="cid"/> an INFO with <c>"ldm":true</c>, as lame duck mode does to every
    /// client, so it reconnects elsewhere; only a NATS client that takes async INFO (CONNECT protocol 1)
    /// once its CONNECT is done can be told. The error text as nats-server's otherwise.
    /// </summary>
    internal string? SendLameDuckInfo(ulong cid)
    {
        foreach (var c in Clients)
        {
            if (c.Id != cid || c.IsClosed || c.IsServerLink || c.IsInternal)
            {
                continue;
            }

            if (c is not ClientConnection { ConnectOptions.Protocol: >= 1 } nats)
            {
                return "client does not support Lame Duck Mode or is not ready to receive the notification";
            }

            var info = Info.Create(nats);
            info.LameDuckMode = true;
            // INFO {json}\r\n
            c.Outbound.Write(ProtocolWriter.Info(info));
            c.Outbound.Signal();
            return null;
        }

        return "no such client id";
    }
}
