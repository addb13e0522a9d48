namespace Courier.Actors.Routing;

/// <summary>
/// An immutable subject trie (one shard's subscriptions). Changes return a new trie that shares
/// every untouched node with the old one (path copying), so a published snapshot can be read by
/// any number of publishers without locks while the shard's router builds the next.
/// </summary>
/// <remarks>
/// A level holds literal tokens, a <c>*</c> child and the subscriptions of a trailing <c>&gt;</c>.
/// Insert and remove copy one node per token, and one path of that node's literal map (a persistent
/// <see cref="TokenMap{T}"/>: a few small arrays however many literal children the level has).
/// Match is the miss path only (results are cached per snapshot), so it may allocate.
/// </remarks>
internal sealed class SubList
{
    public static readonly SubList Empty = new(Node.Empty, 0);

    private readonly Node _root;

    private SubList(Node root, int count)
    {
        _root = root;
        Count = count;
    }

    /// <summary>Subscriptions held.</summary>
    public int Count { get; }

    /// <summary>Adds a subscription; adding one already present returns this trie unchanged.</summary>
    public SubList Insert(Subscription sub)
    {
        var tokens = sub.Subject.Split('.');
        var root = Node.Insert(_root, tokens, 0, sub, out var added);
        return added ? new SubList(root, Count + 1) : this;
    }

    /// <summary>Removes a subscription; removing one not present returns this trie unchanged.</summary>
    public SubList Remove(Subscription sub)
    {
        var tokens = sub.Subject.Split('.');
        var root = Node.Remove(_root, tokens, 0, sub, out var removed);
        return removed ? new SubList(root ?? Node.Empty, Count - 1) : this;
    }

    /// <summary>Every subscription whose subject matches the literal <paramref name="subject"/>.</summary>
    public void Match(string subject, List<Subscription> plain, List<Subscription> queued) =>
        Match(subject.AsSpan(), plain, queued);

    /// <summary>
    /// Every subscription whose subject matches the literal <paramref name="subject"/>, walking its
    /// tokens as slices: a miss on a one-off subject (an ack, an inbox) allocates nothing here.
    /// </summary>
    public void Match(ReadOnlySpan<char> subject, List<Subscription> plain, List<Subscription> queued) =>
        Node.Match(_root, subject, end: false, plain, queued);

    /// <summary>All subscriptions, for monitoring.</summary>
    public void CollectAll(List<Subscription> into) => Node.CollectAll(_root, into);

    private sealed class Node
    {
        public static readonly Node Empty = new(null, null, null, [], []);

        private Node(TokenMap<Node>? literals, Node? star, Node? full, Subscription[] plain, Subscription[] queued)
        {
            Literals = literals;
            Star = star;
            Full = full;
            Plain = plain;
            Queued = queued;
        }

        public TokenMap<Node>? Literals { get; }

        public Node? Star { get; }

        /// <summary>The <c>&gt;</c> child: its subscriptions match any one or more remaining tokens.</summary>
        public Node? Full { get; }

        public Subscription[] Plain { get; }

        public Subscription[] Queued { get; }

        private bool IsEmpty => Literals is null && Star is null && Full is null && Plain.Length == 0 && Queued.Length == 0;

        public static Node Insert(Node node, string[] tokens, int i, Subscription sub, out bool added)
        {
            if (i == tokens.Length)
            {
                var list = sub.Queue is null ? node.Plain : node.Queued;
                if (Array.IndexOf(list, sub) >= 0)
                {
                    added = false;
                    return node;
                }

                added = true;
                var grown = new Subscription[list.Length + 1];
                list.CopyTo(grown, 0);
                grown[^1] = sub;
                return sub.Queue is null
                    ? new Node(node.Literals, node.Star, node.Full, grown, node.Queued)
                    : new Node(node.Literals, node.Star, node.Full, node.Plain, grown);
            }

            var token = tokens[i];
            switch (token)
            {
                case "*":
                    return new Node(node.Literals, Insert(node.Star ?? Empty, tokens, i + 1, sub, out added), node.Full, node.Plain, node.Queued)
                        is var s && added ? s : node;
                case ">":
                    return new Node(node.Literals, node.Star, Insert(node.Full ?? Empty, tokens, i + 1, sub, out added), node.Plain, node.Queued)
                        is var f && added ? f : node;
                default:
                    Node? child = null;
                    node.Literals?.TryGetValue(token, out child);
                    var newChild = Insert(child ?? Empty, tokens, i + 1, sub, out added);
                    if (!added)
                    {
                        return node;
                    }

                    var literals = (node.Literals ?? TokenMap<Node>.Empty).SetItem(token, newChild);
                    return new Node(literals, node.Star, node.Full, node.Plain, node.Queued);
            }
        }

        /// <summary>Returns the new node, or null when it became empty.</summary>
        public static Node? Remove(Node node, string[] tokens, int i, Subscription sub, out bool removed)
        {
            if (i == tokens.Length)
            {
                var list = sub.Queue is null ? node.Plain : node.Queued;
                var at = Array.IndexOf(list, sub);
                if (at < 0)
                {
                    removed = false;
                    return node;
                }

                removed = true;
                var shrunk = new Subscription[list.Length - 1];
                Array.Copy(list, 0, shrunk, 0, at);
                Array.Copy(list, at + 1, shrunk, at, list.Length - at - 1);
                var replaced = sub.Queue is null
                    ? new Node(node.Literals, node.Star, node.Full, shrunk, node.Queued)
                    : new Node(node.Literals, node.Star, node.Full, node.Plain, shrunk);
                return replaced.IsEmpty ? null : replaced;
            }

            Node result;
            var token = tokens[i];
            switch (token)
            {
                case "*":
                    if (node.Star is null)
                    {
                        removed = false;
                        return node;
                    }

                    result = new Node(node.Literals, Remove(node.Star, tokens, i + 1, sub, out removed), node.Full, node.Plain, node.Queued);
                    break;
                case ">":
                    if (node.Full is null)
                    {
                        removed = false;
                        return node;
                    }

                    result = new Node(node.Literals, node.Star, Remove(node.Full, tokens, i + 1, sub, out removed), node.Plain, node.Queued);
                    break;
                default:
                    Node? child = null;
                    if (node.Literals is null || !node.Literals.TryGetValue(token, out child))
                    {
                        removed = false;
                        return node;
                    }

                    var newChild = Remove(child, tokens, i + 1, sub, out removed);
                    if (!removed)
                    {
                        return node;
                    }

                    var literals = newChild is null ? node.Literals.Remove(token) : node.Literals.SetItem(token, newChild);

                    result = new Node(literals.Count == 0 ? null : literals, node.Star, node.Full, node.Plain, node.Queued);
                    break;
            }

            if (!removed)
            {
                return node;
            }

            return result.IsEmpty ? null : result;
        }

        // rest: the tokens not yet matched (with their dots); end: every token is matched (rest is then empty and means nothing).
        public static void Match(Node node, ReadOnlySpan<char> rest, bool end, List<Subscription> plain, List<Subscription> queued)
        {
            if (end)
            {
                AddAll(plain, node.Plain);
                AddAll(queued, node.Queued);
                return;
            }

            if (node.Full is not null)
            {
                AddAll(plain, node.Full.Plain);
                AddAll(queued, node.Full.Queued);
            }

            var dot = rest.IndexOf('.');
            var token = dot < 0 ? rest : rest[..dot];
            var next = dot < 0 ? default : rest[(dot + 1)..];
            if (node.Literals is not null && node.Literals.TryGetValue(token, out var child))
            {
                Match(child, next, dot < 0, plain, queued);
            }

            if (node.Star is not null)
            {
                Match(node.Star, next, dot < 0, plain, queued);
            }
        }

        // List.AddRange on an array goes through ICollection<T>.CopyTo; most nodes hold none or one.
        private static void AddAll(List<Subscription> into, Subscription[] subs)
        {
            if (subs.Length == 1)
            {
                into.Add(subs[0]);
            }
            else if (subs.Length > 1)
            {
                into.AddRange(subs);
            }
        }

        public static void CollectAll(Node node, List<Subscription> into)
        {
            into.AddRange(node.Plain);
            into.AddRange(node.Queued);
            if (node.Literals is not null)
            {
                var children = new List<Node>(node.Literals.Count);
                node.Literals.CollectValues(children);
                foreach (var child in children)
                {
                    CollectAll(child, into);
                }
            }

            if (node.Star is not null)
            {
                CollectAll(node.Star, into);
            }

            if (node.Full is not null)
            {
                CollectAll(node.Full, into);
            }
        }
    }
}
