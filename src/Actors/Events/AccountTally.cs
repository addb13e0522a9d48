using Courier.Actors.Accounts;
using Courier.Actors.Connections;

namespace Courier.Actors.Events;

/// <summary>
/// One account's local connections and their traffic (nats-server's Account.statz): the figures of
/// <c>$SYS.ACCOUNT.&lt;account&gt;.SERVER.CONNS</c>, <c>$SYS.REQ.ACCOUNT.&lt;account&gt;.STATZ</c> and <c>/accstatz</c>.
/// </summary>
/// <param name="Connections">Client connections (leaf links apart), nats-server's numLocalConnections.</param>
/// <param name="LeafNodes">Leaf node links bound to the account, nats-server's numLocalLeafNodes.</param>
/// <param name="InMsgs">Messages the client connections sent to the server.</param>
/// <param name="InBytes">Their bytes.</param>
/// <param name="OutMsgs">Messages the server sent to the client connections.</param>
/// <param name="OutBytes">Their bytes.</param>
internal readonly record struct AccountTally(int Connections, int LeafNodes, long InMsgs, long InBytes, long OutMsgs, long OutBytes)
{
    /// <summary>Counts <paramref name="account"/>'s open connections among <paramref name="clients"/>.</summary>
    public static AccountTally Of(IEnumerable<Connection> clients, Account account)
    {
        int conns = 0, leafs = 0;
        long inMsgs = 0, inBytes = 0, outMsgs = 0, outBytes = 0;
        foreach (var c in clients)
        {
            if (c.IsLeaf && !c.IsClosed && ReferenceEquals(c.Account, account))
            {
                leafs++; // nats-server's numLocalLeafNodes: counted apart, and in the total
                continue;
            }

            if (c.IsInternal || c.IsServerLink || c.IsClosed || c.ConnectOptions is null || !ReferenceEquals(c.Account, account))
            {
                continue;
            }

            conns++;
            inMsgs += c.InMsgs;
            inBytes += c.InBytes;
            outMsgs += c.Outbound.OutMsgs;
            outBytes += c.Outbound.OutBytes;
        }

        return new AccountTally(conns, leafs, inMsgs, inBytes, outMsgs, outBytes);
    }
}
