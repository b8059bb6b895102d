"""Concept tokens shared across languages: what the learned rule learns from English attacks transfers to Spanish.

A hand-written dictionary maps words of the attack vocabulary — in English, Spanish and, where cheap, Portuguese,
French, German and Italian — to shared concept tokens: «ignore», «ignora», «olvida», «disregard» → IGNORE;
«instructions», «instrucciones», «indicaciones», «reglas» → INSTRUCTIONS; «previous», «anteriores», «previas» →
PREVIOUS … A text's concept sequence (words outside the dictionary are skipped, but counted for distance) gives
concept unigrams, unordered pairs and unordered triples of nearby concepts (Spanish puts the adjective after
the noun: «instrucciones anteriores» and «previous instructions» are the same pair). `features.py` adds them as
features of their own, so "IGNORE + PREVIOUS + INSTRUCTIONS" learned from thousands of English attacks weighs
the same in «ignora las instrucciones anteriores».

Words are looked up on normalised text (lower case, accents folded: «contraseña» is «contrasena»); a word not in
the table is tried by its longest listed stem (`STEMS`, at least 5 letters), so «ignorando», «olvidate» and
«instrucciones» need no entry of their own. Multi-word phrases («en lugar de», «a partir de ahora», «haz caso
omiso», «do not») are folded first (`PHRASES`).
"""

from __future__ import annotations

import re

# concept -> words (normalised: lower case, no accents). Keep entries to the attack vocabulary: a concept that
# fires on everything teaches nothing.
_WORDS: dict[str, str] = {
    "IGNORE": "ignore ignores ignored ignoring disregard disregards disregarding forget forgets forgetting "
              "overlook bypass override overrides overriding overrule discard ignora ignoren ignorar ignoras "
              "ignorame ignoralo ignorala ignoralas ignoralos ignoremos olvida olvides olviden olvidar olvidate "
              "olvidalo olvidala olvidalas olvidalos olvidense olvidemos omite omitir omitan omitas descarta descartes "
              "descarten descartar desestima desatiende obvia esqueca esquece esquecer desconsidere desconsidera "
              "ignorez oublie oubliez oublier vergiss vergessen ignoriere ignorieren missachte dimentica dimenticate "
              "ignorate",
    "CANCEL": "cancel cancelled canceled void nullify nullified revoke revoked supersede supersedes superseded replace "
              "replaced replaces anula anulada anuladas anulado anulados anular cancela cancelada canceladas "
              "reemplaza reemplazada reemplazadas reemplazado sustituye sustituida sustituidas invalida invalidada "
              "revoca revocada annule annulee ersetzt aufgehoben annullate",
    "PREVIOUS": "previous prior above earlier preceding former original originally initial beforehand anterior "
                "anteriores anteriormente previa previas previo previos precedente precedentes inicial iniciales "
                "originales arriba precedentes anterieures precedent precedents vorherigen vorherige bisherigen "
                "obigen precedenti anteriori",
    "INSTRUCTIONS": "instruction instructions prompt prompts directive directives directions guidelines guideline "
                    "rules rule orders commands programming configuration instruccion instrucciones indicacion "
                    "indicaciones ordenes reglas regla pautas pauta directrices directriz directivas consignas consigna "
                    "configuracion programacion mandatos instrucoes regras ordens consignes regles anweisungen "
                    "anweisung regeln befehle istruzioni regole",
    "TASK": "task tasks job goal mission objective assignment tarea tareas mision objetivo encargo encomienda "
            "cometido tache aufgabe compito",
    "NEW": "new updated nueva nuevas nuevo nuevos actualizada actualizadas actualizado nouvelle nouvelles neue neuen "
           "nuove nuova",
    "INSTEAD": "instead rather",
    "NOW": "now henceforth ahora agora maintenant jetzt adesso ora",
    "RESPOND": "respond responds responding reply replies replying answer answers answering response responses output "
               "outputs responde responda respondan respondas responder respondes respondiendo contesta conteste "
               "contesten contestes contestar respuesta respuestas salida devuelve devuelva resposta responda "
               "reponds repondez reponse antworte antworten antwort rispondi rispondete risposta",
    "YOU": "you your yours yourself tu tus te ti usted ustedes vos vous votre tes ton toi du dein deine deinen dich dir "
           "voce seu sua tuo tua tuoi",
    "SAY": "say says saying tell tells state states print prints write writes repeat repeats mention mentions "
           "claim claims declare affirm assert insist di decir diga digan digas dile dime decirle escribe escriba "
           "escriban escribir imprime imprima imprimir repite repita repetir menciona mencione mencionar afirma "
           "afirme afirmar asegura asegure declara declare diga escreva diz dis dites ecris ecrivez sag sage "
           "schreib schreibe scrivi",
    "MENTION": "mention mentions mentioning cite cites citar menciones mencionar menciona mencionen cites citas "
               "referencia",
    "ONLY": "only solely exclusively merely solo solamente unicamente exclusivamente apenas somente seulement "
            "uniquement nur soltanto",
    "ALWAYS": "always siempre sempre toujours immer",
    "NEVER": "never nunca jamas jamais nie niemals mai",
    "NOT": "not no dont nor ni nao ne pas nicht non",
    "ALL": "all everything any every todo todas todos toda cualquier cualquiera tout tous toutes alle alles tutte "
           "tutti tudo",
    "AI": "ai assistant assistants chatbot chatbots bot bots llm llms gpt chatgpt claude gemini copilot bard model "
          "models agent agents crawler crawlers robot robots ia asistente asistentes modelo modelos agente agentes "
          "assistente assistentes modelle modele ki assistent modell modello",
    "SYSTEM": "system sistema systeme systems sistemas",
    "AUTHORITY": "developer developers admin administrator administrators creator creators operator owner root sudo "
                 "god desarrollador desarrolladores administrador administradora creador creadores operador dueno "
                 "dios programador programadores",
    "ROLE": "act acting pretend pretending roleplay impersonate simulate persona character role actua actue actuen "
            "actuar finge fingir finja finjas simula simular interpreta personaje papel rol conviertete agis "
            "spiele fingi",
    "BE": "are eres seras sereis sei bist",
    "SECRET": "password passwords passcode passphrase secret secrets credentials credential token pin contrasena "
              "contrasenas clave claves secreto secretos credenciales nip senha passwort kennwort segreto",
    "REVEAL": "reveal reveals disclose leak leaks expose show display share revela revelar revele revelen muestra "
              "muestres muestrame mostrar comparte compartir filtra divulga divulgar expone revele mostre revele "
              "montre verrate zeige rivela mostra",
    "GIVE": "give gives provide dame dar proporciona proporcione entrega entregame",
    "USER": "user users reader readers human humans usuario usuarios usuaria lector lectora lectores humano humanos "
            "utilisateur benutzer utente",
    "HIDE": "hide hides hidden conceal omit suppress oculta ocultes ocultar oculten esconde escondas esconder calla "
            "callate omitas",
    "VERIFY": "verify verifying check checking crosscheck validate contrast factcheck compare verifica "
              "verifiques verificar verifiquen contrasta contrastes contrastar compruebes comprobar compares comparar "
              "cuestiones cuestionar valida validar",
    "CONFIRMED": "confirmed verified certified endorsed approved official validated fact facts true accurate "
                 "confirmado confirmada confirmados confirmadas verificado verificada certificado certificada avalado "
                 "avalada aprobado aprobada oficial validado validada cierto veraz verdadero",
    "PRESENT": "present presents treat consider regard describe portray frame label rate presenta presentala "
               "presentalo presentar trata tratala tratalo considera describe describelo califica calificar",
    "RECOMMEND": "recommend recommends suggest promote endorse advertise prefer recomienda recomiende recomendar "
                 "sugiere sugerir promueve promociona promocionar prefiere recommande empfiehl raccomanda",
    "INCLUDE": "include includes add append insert embed integrate prepend put start begin incluye incluya "
               "incluir agrega agregue agregar anade anadir inserta insertar pon ponga poner integra termina "
               "terminar empieza empezar comienza comenzar inclua ajoute fuge aggiungi",
    "LINK": "link links url urls http https www enlace enlaces liga ligas vinculo hipervinculo lien",
    "SEND": "send sends forward exfiltrate upload transmit envia enviar envie enviame manda mandar mande reenvia "
            "reenviar sube transmite envoie sende invia",
    "DATA": "data history conversation chat messages context details datos historial conversacion mensajes contexto "
            "detalles dados donnees daten",
    "SUMMARIZE": "summarize summarizes summarizing summarise summarising summary summaries resume resumen resumir "
                 "resumas resuma resumes resumiendo sintetiza resumo resume zusammenfassung riassunto",
    "DOCUMENT": "page webpage document text article website site content passage email pagina documento texto "
                "articulo sitio contenido correo web",
    "OBEY": "follow follows obey comply execute perform sigue sigas siga seguir obedece obedezca obedecer cumple "
            "cumplir ejecuta ejecutar acata acatar segue suis befolge segui",
    "STOP": "stop cease quit halt deja dejes dejar detente deten abandona pare arrete stopp",
    "RESTRICT": "restrictions restriction restricted limits limitations filters filter censorship ethics ethical "
                "safety constraints policies policy restricciones restriccion limites limitaciones filtros censura "
                "etica eticas politicas seguridad",
    "JAILBREAK": "dan jailbreak jailbroken jailbreaking unrestricted unfiltered uncensored unlimited unbound",
    "MODE": "mode modo modus modalita",
    "ACCESS": "access acceso accesso zugang acces",
    "GRANTED": "granted concedido concedida otorgado otorgada permitido accorde gewahrt concesso",
    "NOTICE": "note notice message memo reminder attention nota aviso mensaje recordatorio atencion advertencia "
              "avviso hinweis",
    "IMPORTANT": "important urgent crucial critical importante urgente imprescindible wichtig dringend",
    "MUST": "must should need needs required shall debes debe deben deberas deberan tienes necesito necesitas "
            "obligatorio obligatoria requiere devi doit musst",
    "BEFORE": "before after antes despues avant vorher prima",
    "WHEN": "when whenever while cuando mientras quand wenn quando",
    "IF": "if si wenn",
    "ENCODE": "encode encoded encoding base64 base32 caesar cipher encrypt encrypted reverse reversed rot13 hex "
              "codifica codificada codificar cifra cifrado cifrada invierte inversa invertido",
    "TRANSLATE": "translate translated traduce traducir traduzca traducida traduza traduis ubersetze traduci",
    "FALSE": "fabricated false fake misleading falsa falso falsas falsos inventada inventado enganosa",
    "ASK": "ask asks asked asking question pregunta preguntan pregunte preguntas preguntar",
    "CREATIVE": "joke poem haiku story song limerick chiste poema cuento cancion",
    "READ": "read reading reads processing process parse parsing crawl crawling scrape scraping index indexing lee "
            "leyendo lees lean lea procesa procesando procesas procese procesen",
    "PLEASE": "please",
    "EXACTLY": "exactly verbatim literally literal exactamente textualmente literalmente",
    "MODEL_OUTPUT": "pwned hacked haha",
}
# stems (at least 5 letters): a word not in the table takes the concept of its longest listed stem
_STEMS: dict[str, str] = {
    "IGNORE": "ignor disregard olvid descart desestim omiti",
    "INSTRUCTIONS": "instruc indicac directri guideli",
    "PREVIOUS": "anterio previo",
    "RESPOND": "respond contest",
    "SECRET": "contrase passwor",
    "REVEAL": "revel divulg",
    "VERIFY": "verific contrast",
    "CONFIRMED": "confirm certific",
    "RECOMMEND": "recomend recommend recomiend",
    "SUMMARIZE": "summar resumi resuma",
    "RESTRICT": "restric",
    "ENCODE": "codific",
    "TRANSLATE": "tradu transla",
    "IMPORTANT": "importan",
}
# multi-word phrases, folded to one concept before the words are looked up
_PHRASES: dict[str, str] = {
    "en lugar de": "INSTEAD", "en vez de": "INSTEAD", "instead of": "INSTEAD", "rather than": "INSTEAD",
    "a partir de ahora": "NOW", "de ahora en adelante": "NOW", "from now on": "NOW", "desde ahora": "NOW",
    "desde este momento": "NOW", "a partir de este momento": "NOW", "from this moment": "NOW",
    "haz caso omiso": "IGNORE", "hagan caso omiso": "IGNORE", "hace caso omiso": "IGNORE", "no hagas caso": "IGNORE",
    "no tomes en cuenta": "IGNORE", "pay no attention": "IGNORE", "set aside": "IGNORE", "deja de lado": "IGNORE",
    "deja a un lado": "IGNORE", "sin efecto": "CANCEL", "no longer": "CANCEL", "ya no": "CANCEL",
    "do not": "NOT", "don t": "NOT", "doesn t": "NOT", "won t": "NOT", "can t": "NOT", "no longer apply": "CANCEL",
    "por favor": "PLEASE", "mot de passe": "SECRET", "inteligencia artificial": "AI", "language model": "AI",
    "modelo de lenguaje": "AI", "modelos de lenguaje": "AI", "artificial intelligence": "AI",
    "act as": "ROLE", "actua como": "ROLE", "you are now": "ROLE", "ahora eres": "ROLE", "eres ahora": "ROLE",
    "haz de cuenta": "ROLE", "hazte pasar": "ROLE", "do anything now": "JAILBREAK", "developer mode": "JAILBREAK",
    "modo desarrollador": "JAILBREAK", "sin restricciones": "JAILBREAK", "sin filtros": "JAILBREAK",
    "no restrictions": "JAILBREAK", "system prompt": "SYSTEM", "prompt del sistema": "SYSTEM",
    "cross check": "VERIFY", "fact check": "VERIFY", "tal cual": "EXACTLY", "word for word": "EXACTLY",
    "palabra por palabra": "EXACTLY", "access granted": "GRANTED", "acceso concedido": "GRANTED",
}

CONCEPTS: tuple[str, ...] = tuple(sorted(set(_WORDS) | set(_STEMS) | set(_PHRASES.values())))
N_CONCEPTS = len(CONCEPTS)


def definition() -> dict:
    """The tables that map words, stems and phrases to concepts (for features.definition_digest)."""
    return {"words": _WORDS, "stems": _STEMS, "phrases": _PHRASES}


_ID = {c: k for k, c in enumerate(CONCEPTS)}
_TABLE: dict[str, int] = {}
for _c, _ws in _WORDS.items():
    for _w in _ws.split():
        _TABLE.setdefault(_w, _ID[_c])
_STEM_TABLE: dict[str, int] = {}
for _c, _ws in _STEMS.items():
    for _w in _ws.split():
        _STEM_TABLE[_w] = _ID[_c]
_STEM_LENGTHS = sorted({len(s) for s in _STEM_TABLE}, reverse=True)
_PHRASE_FIRST: dict[str, list[tuple[tuple[str, ...], int]]] = {}
for _p, _c in sorted(_PHRASES.items(), key=lambda kv: -len(kv[0].split())):
    _ws = tuple(_p.split())
    _PHRASE_FIRST.setdefault(_ws[0], []).append((_ws, _ID[_c]))
WORD_RX = re.compile(r"[^\W_]+")
SPAN = 4                       # pairs and triples are drawn from this many consecutive concepts…
MAX_WORDS = 7                  # …at most this many words apart
_MEMO: dict[str, int] = {}


def concept_of(word: str) -> int:
    """The concept id of one normalised word, or -1."""
    got = _MEMO.get(word)
    if got is not None:
        return got
    cid = _TABLE.get(word, -1)
    if cid < 0 and len(word) >= 5:
        for n in _STEM_LENGTHS:
            if n <= len(word):
                cid = _STEM_TABLE.get(word[:n], -1)
                if cid >= 0:
                    break
    if len(_MEMO) > 200_000:
        _MEMO.clear()
    _MEMO[word] = cid
    return cid


def sequence(prepared: str) -> list[tuple[int, int]]:
    """(concept id, word position) of a prepared text, phrases folded."""
    words = WORD_RX.findall(prepared)
    out: list[tuple[int, int]] = []
    i = 0
    n = len(words)
    while i < n:
        w = words[i]
        cands = _PHRASE_FIRST.get(w)
        if cands:
            for ws, cid in cands:
                k = len(ws)
                if tuple(words[i:i + k]) == ws:
                    out.append((cid, i))
                    i += k
                    break
            else:
                cid = concept_of(w)
                if cid >= 0:
                    out.append((cid, i))
                i += 1
            continue
        cid = concept_of(w)
        if cid >= 0:
            out.append((cid, i))
        i += 1
    return out


def grams(seq: list[tuple[int, int]]) -> tuple[set[int], set[tuple[int, int]], set[tuple[int, int, int]]]:
    """Unigrams, and unordered pairs and triples of concepts among SPAN consecutive concepts at most MAX_WORDS
    words apart (a bag within a short span: word order and the words between do not matter)."""
    uni = {c for c, _ in seq}
    pairs: set[tuple[int, int]] = set()
    triples: set[tuple[int, int, int]] = set()
    n = len(seq)
    for k in range(n):
        a, pa = seq[k]
        for j in range(k + 1, min(k + SPAN, n)):
            b, pb = seq[j]
            if pb - pa > MAX_WORDS:
                break
            pairs.add((a, b) if a <= b else (b, a))
            for m in range(j + 1, min(k + SPAN, n)):
                c, pc = seq[m]
                if pc - pa > MAX_WORDS:
                    break
                triples.add(tuple(sorted((a, b, c))))  # type: ignore[arg-type]
    return uni, pairs, triples
