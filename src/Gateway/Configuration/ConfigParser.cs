namespace Courier.Gateway.Configuration;

/// <summary>
/// Parses nats-server's config file format (nats-server conf/lex.go, conf/parse.go) into a
/// <see cref="ConfigMap"/> tree.
/// </summary>
/// <remarks>
/// <para>Grammar, as nats-server accepts it:</para>
/// <list type="bullet">
/// <item><c>key = value</c>, <c>key: value</c>, <c>key value</c>; keys may be quoted; a value
/// ends at a new line, <c>;</c>, <c>,</c> or the <c>}</c> closing its block.</item>
/// <item>Blocks <c>name { ... }</c> / <c>name = { ... }</c>; arrays <c>[a, b]</c> with values
/// separated by commas or new lines (a trailing comma is allowed); the whole file may be wrapped
/// in <c>{ ... }</c>.</item>
/// <item>Comments <c>#</c> and <c>//</c> to the end of the line.</item>
/// <item><c>include file</c> (quoted or not) merges another file's top-level keys into the current
/// block, the path relative to the including file.</item>
/// <item>Scalars: see <see cref="ParseValue"/>; <c>$name</c> variables see <see cref="ResolveVariable"/>.</item>
/// </list>
/// <para>Where nats-server silently misreads (<c>[1,2]</c> giving the string <c>"2"</c>, an
/// unquoted <c>1m30s</c> failing, an absolute include path joined onto the including
/// directory), this parser does the evident thing instead.</para>
/// </remarks>
internal sealed partial class ConfigParser
{
    private const int Eof = -1;

    // Blocks and arrays nested deeper than this are refused, so a broken or hostile file cannot
    // exhaust the stack; real configs nest fewer than 10 levels.
    private const int MaxDepth = 128;

    private readonly string _text;
    private readonly string? _file;
    private readonly string _directory;
    private readonly HashSet<string> _includeChain;
    private readonly HashSet<string> _envReferences;

    /// <summary>Maps enclosing the current position, innermost last: the scopes for <c>$variables</c>.</summary>
    private readonly List<ConfigMap> _scopes = [];

    private int _pos;
    private int _line = 1;
    private int _lineStart;
    private int _depth;

    private ConfigParser(string text, string? file, HashSet<string> includeChain, HashSet<string> envReferences)
    {
        _text = text;
        _file = file;
        _directory = file is null ? "" : Path.GetDirectoryName(file) ?? "";
        _includeChain = includeChain;
        _envReferences = envReferences;
    }

    /// <summary>Reads and parses a config file; includes resolve relative to its directory.</summary>
    /// <exception cref="ConfigException">The file (or an included one) cannot be read or parsed.</exception>
    public static ConfigMap ParseFile(string path)
    {
        var text = ReadFile(path, out var error);
        if (text is null)
        {
            throw new ConfigException($"error opening config file: {error}");
        }

        return new ConfigParser(text, path, [Path.GetFullPath(path)], []).ParseDocument();
    }

    /// <summary>
    /// Parses config text. <paramref name="file"/> names it in error positions and anchors
    /// relative includes; without it includes resolve against the current directory.
    /// </summary>
    /// <exception cref="ConfigException">The text (or an included file) cannot be parsed.</exception>
    public static ConfigMap Parse(string text, string? file = null)
    {
        HashSet<string> chain = file is null ? [] : [Path.GetFullPath(file)];
        return new ConfigParser(text, file, chain, []).ParseDocument();
    }

    private ConfigMap ParseDocument()
    {
        var root = new ConfigMap();
        _scopes.Add(root);
        ParseBody(root, openedAt: null, isRoot: true);
        return root;
    }

    /// <summary>
    /// Parses <c>key value</c> entries into <paramref name="map"/> until the end of the file or,
    /// when <paramref name="openedAt"/> is set, the matching <c>}</c> (consumed).
    /// </summary>
    private void ParseBody(ConfigMap map, ConfigPosition? openedAt, bool isRoot)
    {
        while (true)
        {
            SkipTrivia();
            var c = Peek();
            if (c == Eof)
            {
                if (openedAt is { } open)
                {
                    throw Error(Here(), $"unexpected end of file: the block opened at {open} is not closed with '}}'");
                }

                return;
            }

            if (c == '}')
            {
                if (openedAt is null)
                {
                    throw Error(Here(), "unexpected '}' with no block to close");
                }

                Advance();
                return;
            }

            if (c == '{' && isRoot)
            {
                // A file wrapped in braces, JSON style: the keys still belong to the top level.
                var open = Here();
                Advance();
                Nest();
                ParseBody(map, open, isRoot: true);
                _depth--;
                continue;
            }

            ParseEntry(map);
        }
    }

    private void ParseEntry(ConfigMap map)
    {
        var keyPos = Here();
        var c = Peek();
        if (c is '=' or ':')
        {
            throw Error(keyPos, $"unexpected key separator '{(char)c}', expected a key");
        }

        if (c is '{' or '[' or ']' or ';' or ',')
        {
            throw Error(keyPos, $"expected a key but got '{(char)c}'");
        }

        string key;
        if (c is '"' or '\'')
        {
            key = ReadQuotedKey((char)c);
        }
        else
        {
            key = ReadBareKey();
            if (key.Equals("include", StringComparison.OrdinalIgnoreCase) && IsSpace(Peek()))
            {
                ParseInclude(map, keyPos);
                ExpectValueEnd(key);
                return;
            }
        }

        // nats-server lets new lines sit between a key and its separator or value.
        while (IsSpace(Peek()))
        {
            Advance();
        }

        if (Peek() is '=' or ':')
        {
            Advance();
            SkipBlanks();
        }

        c = Peek();
        if (c == Eof)
        {
            throw Error(keyPos, $"key '{key}' has no value");
        }

        if (c is '\n' or '\r' or '}' or ';' or ',' or ']')
        {
            throw Error(Here(), $"expected a value for '{key}' but found {Describe(c)}");
        }

        var value = ParseValue();
        map.Set(key, value, keyPos);
        ExpectValueEnd(key);
    }

    /// <summary>After a value: blanks, then a comment, new line, <c>;</c>, <c>,</c>, <c>}</c> or the end.</summary>
    private void ExpectValueEnd(string key)
    {
        SkipBlanks();
        var c = Peek();
        if (c is Eof or '\n' or '\r' or '}' || IsCommentStart())
        {
            return;
        }

        if (c is ';' or ',')
        {
            Advance();
            return;
        }

        throw Error(Here(), $"expected a new line, ';', ',' or '}}' after the value of '{key}', but got {Describe(c)}");
    }

    /// <summary>
    /// A value anywhere one is expected: <c>[</c> array, <c>{</c> block, quoted or block string,
    /// or a bare token (see <see cref="ReadBareValue"/>).
    /// </summary>
    private object? ParseValue()
    {
        return Peek() switch
        {
            '[' => ParseArray(),
            '{' => ParseMap(),
            '"' => ReadDoubleQuoted(),
            '\'' => ReadSingleQuoted(),
            '(' => ReadBlockString(),
            '.' => throw Error(Here(), "floats must start with a digit, not '.'"),
            _ => ReadBareValue(),
        };
    }

    private ConfigMap ParseMap()
    {
        var open = Here();
        Advance(); // '{'
        Nest();
        var map = new ConfigMap();
        _scopes.Add(map);
        ParseBody(map, open, isRoot: false);
        _scopes.RemoveAt(_scopes.Count - 1);
        _depth--;
        return map;
    }

    private List<object?> ParseArray()
    {
        var open = Here();
        Advance(); // '['
        Nest();
        var list = new List<object?>();
        while (true)
        {
            SkipTrivia();
            var c = Peek();
            if (c == Eof)
            {
                throw Error(Here(), $"unexpected end of file: the array opened at {open} is not closed with ']'");
            }

            if (c == ']')
            {
                Advance();
                _depth--;
                return list;
            }

            if (c == ',')
            {
                throw Error(Here(), "unexpected ',' in array, expected a value");
            }

            list.Add(ParseValue());
            SkipBlanks();
            c = Peek();
            if (c == ',')
            {
                Advance();
            }
            else if (c is not (Eof or '\n' or '\r' or ']') && !IsCommentStart())
            {
                throw Error(Here(), $"expected ',' or ']' after an array value, but got {Describe(c)}");
            }
        }
    }

    /// <summary><c>include path</c>: parses the file and merges its top-level keys into <paramref name="map"/>.</summary>
    private void ParseInclude(ConfigMap map, ConfigPosition keyPos)
    {
        SkipBlanks();
        var c = Peek();
        string path;
        if (c is '"' or '\'')
        {
            var quote = (char)c;
            Advance();
            var start = _pos;
            while (Peek() != quote)
            {
                if (Peek() == Eof)
                {
                    throw Error(keyPos, "unexpected end of file in quoted include");
                }

                Advance();
            }

            path = _text[start.._pos];
            Advance();
        }
        else if (c is Eof or '\n' or '\r' or '[' or '{' or '(' or '\\' or ';' or '}')
        {
            throw Error(Here(), $"expected an include file name but found {Describe(c)}");
        }
        else
        {
            var start = _pos;
            while (Peek() is not (Eof or '\n' or '\r' or ';' or '}' or ' ' or '\t'))
            {
                Advance();
            }

            path = _text[start.._pos];
        }

        var file = Path.Combine(_directory, path);
        var full = Path.GetFullPath(file);
        if (!_includeChain.Add(full))
        {
            throw Error(keyPos, $"include cycle: '{path}' includes itself");
        }

        try
        {
            var text = ReadFile(file, out var error) ?? throw Error(keyPos, $"error opening include file '{path}': {error}");
            var included = new ConfigParser(text, file, _includeChain, _envReferences).ParseDocument();
            foreach (var entry in included.Entries)
            {
                var merged = map.Set(entry.Key, entry.Value, entry.Position);
                merged.IsUsedAsVariable |= entry.IsUsedAsVariable;
            }
        }
        finally
        {
            _includeChain.Remove(full);
        }
    }

    private string ReadQuotedKey(char quote)
    {
        var open = Here();
        Advance();
        var start = _pos;
        while (Peek() != quote)
        {
            if (Peek() == Eof)
            {
                throw Error(open, "unexpected end of file in a quoted key");
            }

            Advance();
        }

        var key = _text[start.._pos];
        Advance();
        return key;
    }

    /// <summary>A bare key runs to white space, a separator, or the start of a block or array.</summary>
    private string ReadBareKey()
    {
        var start = _pos;
        while (Peek() is not (Eof or '=' or ':' or '{' or '[') && !IsSpace(Peek()))
        {
            Advance();
        }

        return _text[start.._pos];
    }

    private static string? ReadFile(string path, out string? error)
    {
        try
        {
            error = null;
            return File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or NotSupportedException or ArgumentException)
        {
            error = e.Message;
            return null;
        }
    }

    private void Nest()
    {
        if (++_depth > MaxDepth)
        {
            throw Error(Here(), $"blocks and arrays nested deeper than {MaxDepth} levels");
        }
    }

    /// <summary>Skips white space (new lines included) and comments.</summary>
    private void SkipTrivia()
    {
        while (true)
        {
            if (IsSpace(Peek()))
            {
                Advance();
            }
            else if (IsCommentStart())
            {
                while (Peek() is not (Eof or '\n' or '\r'))
                {
                    Advance();
                }
            }
            else
            {
                return;
            }
        }
    }

    /// <summary>Skips spaces and tabs only, the white space allowed inside a line.</summary>
    private void SkipBlanks()
    {
        while (IsBlank(Peek()))
        {
            Advance();
        }
    }

    private bool IsCommentStart() => Peek() == '#' || (Peek() == '/' && Peek(1) == '/');

    private static bool IsBlank(int c) => c is ' ' or '\t';

    /// <summary>Any white space, new lines included.</summary>
    private static bool IsSpace(int c) => c != Eof && char.IsWhiteSpace((char)c);

    private int Peek(int ahead = 0) => _pos + ahead < _text.Length ? _text[_pos + ahead] : Eof;

    private void Advance()
    {
        if (_text[_pos] == '\n')
        {
            _line++;
            _lineStart = _pos + 1;
        }

        _pos++;
    }

    /// <summary>
    /// The current position as nats-server's lexer counts it (conf/lex.go: <c>pos - lstart</c>, where
    /// <c>lstart</c> is the index of the newline before the line, and 0 on the first line): columns
    /// count from 1, except on a file's first line, where they count from 0.
    /// </summary>
    private ConfigPosition Here() => new(_file, _line, _pos - _lineStart + (_line == 1 ? 0 : 1));

    private static ConfigException Error(ConfigPosition position, string reason) => new(position, reason);

    private static string Describe(int c) => c switch
    {
        Eof => "the end of the file",
        '\n' or '\r' => "a new line",
        _ => $"'{(char)c}'",
    };
}
